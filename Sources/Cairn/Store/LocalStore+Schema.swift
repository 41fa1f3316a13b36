import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    /// Creates or migrates the collection tables for `schema` and remembers it; returns the collections that are new
    /// or gained fields (they are marked to be pulled again).
    @discardableResult
    func apply(schema: Schema, etag: String?) throws -> [String] {
        let previous = self.schema
        let changed = try writer.write { db -> [String] in
            var changed: [String] = []
            for collection in schema.collections {
                let table = CollectionTable(schema: collection)
                let exists = try db.tableExists(collection.name)
                if !exists {
                    try db.execute(sql: table.createSQL)
                    changed.append(collection.name)
                } else {
                    let columns = Set(try db.columns(in: collection.name).map(\.name))
                    var added = false
                    for field in collection.fields where !columns.contains(field.name) {
                        try db.execute(sql: "ALTER TABLE \(table.quotedName) ADD COLUMN \(CollectionTable.quote(field.name)) \(CollectionTable.sqlType(field.type))")
                        // Records already hold the new field in their JSON: fill the column from it.
                        try db.execute(sql: "UPDATE \(table.quotedName) SET \(CollectionTable.quote(field.name)) = \(CollectionTable.extract(field, document: "cairn_data", path: "$"))")
                        added = true
                    }
                    if added || previous?.collection(named: collection.name) == nil { changed.append(collection.name) }
                }
                for sql in table.indexSQL { try db.execute(sql: sql) }
                try db.execute(sql: "INSERT INTO cairn_collections (name) VALUES (?) ON CONFLICT (name) DO NOTHING", arguments: [collection.name])
            }
            for name in changed {
                try db.execute(sql: "UPDATE cairn_collections SET needs_pull = 1 WHERE name = ?", arguments: [name])
            }
            try Self.setMeta(db, .schema, String(decoding: try CairnJSON.encode(schema), as: UTF8.self))
            try Self.setMeta(db, .schemaETag, etag)
            return changed
        }
        setCachedSchema(schema)
        return changed
    }

    /// The local table name of a collection: the collection's own name.
    func tableName(_ collection: String) throws -> String { try self.collection(collection).name }
}
