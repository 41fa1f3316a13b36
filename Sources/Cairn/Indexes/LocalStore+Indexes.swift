import CairnProtocol
import GRDB

extension LocalStore {
    /// Keeps an index definition and applies it at once when the collection's table exists (otherwise when the schema
    /// that creates it arrives). Fields are checked against the schema when one is known.
    func addIndex(_ definition: LocalIndexTable.Definition) throws {
        guard !definition.fields.isEmpty else { throw CairnError.invalid("an index needs at least one field") }
        guard Set(definition.fields).count == definition.fields.count else { throw CairnError.invalid("an index names each field once") }
        let known = schema != nil || localCollections.contains(definition.collection)
        let table = known ? try self.table(definition.collection) : nil
        if let table {
            for name in definition.fields where name != "id" || definition.kind == .fullText {
                guard let field = table.schema.field(named: name) else {
                    throw CairnError.invalid("\"\(name)\" is not a field of \(table.name)")
                }
                if definition.kind == .fullText, field.type != .string {
                    throw CairnError.invalid("full-text search reads string fields; \"\(name)\" is \(field.type.rawValue)")
                }
            }
        }
        try writer.write { db in
            try localIndexes.add(db, definition)
            if let table, try db.tableExists(table.name) { try localIndexes.apply(db, to: table) }
        }
    }

    /// Forgets a collection's full-text index and drops it.
    func removeFullText(collection: String) throws {
        try writer.write { db in
            try localIndexes.removeFullText(db, collection: collection)
            try FullTextIndex.drop(db, collection: collection)
        }
    }
}
