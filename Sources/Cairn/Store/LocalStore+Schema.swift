import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    /// Creates or migrates the collection tables for `schema` and remembers it; returns the collections that are new
    /// or gained fields (they are marked to be pulled again).
    @discardableResult
    func apply(schema: Schema, etag: String?) throws -> [String] {
        let previous = self.schema
        if let clash = schema.collections.first(where: { localCollections.contains($0.name) }) {
            throw CairnError(.schemaUnavailable, "The server's schema has a collection \"\(clash.name)\", which this app declares local-only; rename the local one")
        }
        let changed = try writer.write { db -> [String] in
            var changed: [String] = []
            // Across a breaking change to the next number, the local records take the new shape here, as the
            // server's did: those collections need no fresh pull.
            let migratedLocally = try migrateLocally(db, from: previous, to: schema)
            for collection in schema.collections {
                let table = CollectionTable(schema: collection)
                let migrated = try table.migrate(db)
                try localIndexes.apply(db, to: table)
                if migrated || previous?.collection(named: collection.name) == nil { changed.append(collection.name) }
                try collectionStates.register(db, collection.name)
            }
            for name in changed where !migratedLocally.contains(name) { try collectionStates.markNeedsPull(db, name) }
            try metaTable.set(db, .schema, String(decoding: try CairnJSON.encode(schema), as: UTF8.self))
            try metaTable.set(db, .schemaETag, etag)
            return changed
        }
        use(schema)
        return changed
    }

    /// The local table name of a collection: the collection's own name.
    func tableName(_ collection: String) throws -> String { try self.collection(collection).name }
}
