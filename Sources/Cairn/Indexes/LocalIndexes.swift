import CairnProtocol
import GRDB

/// The indexes and full-text indexes the app asks for (``LocalIndexTable``), kept and applied to the collection
/// tables.
///
/// ```swift
/// try store.indexes.addIndex(.init(collection: "notes", kind: .fullText, fields: ["title"]))
/// ```
struct LocalIndexes: Sendable {
    /// The store whose tables are indexed.
    let store: LocalStore
}

extension LocalIndexes {
    /// Keeps an index definition and applies it at once when the collection's table exists (otherwise when the schema
    /// that creates it arrives). Fields are checked against the schema when one is known.
    func addIndex(_ definition: LocalIndexTable.Definition) throws {
        guard !definition.fields.isEmpty else { throw CairnError.invalid("an index needs at least one field") }
        guard Set(definition.fields).count == definition.fields.count else { throw CairnError.invalid("an index names each field once") }
        let known = store.schema != nil || store.localCollections.contains(definition.collection)
        let table = known ? try store.table(definition.collection) : nil
        if let table {
            for name in definition.fields where name != "id" || definition.kind == .fullText {
                guard let field = table.schema.field(named: name) else {
                    // A path inside a json field (address.city) is indexed as queries read it.
                    if definition.kind == .index, (try? table.readExpression(name)) != nil { continue }
                    throw CairnError.invalid("\"\(name)\" is not a field of \(table.name), nor a path inside one of its json fields")
                }
                if definition.kind == .fullText, field.type != .string {
                    throw CairnError.invalid("full-text search reads string fields; \"\(name)\" is \(field.type.rawValue)")
                }
            }
        }
        try store.writer.write { db in
            try store.localIndexes.add(db, definition)
            if let table, try db.tableExists(table.name) { try store.localIndexes.apply(db, to: table) }
        }
    }

    /// Forgets a collection's full-text index and drops it.
    func removeFullText(collection: String) throws {
        try store.writer.write { db in
            try store.localIndexes.removeFullText(db, collection: collection)
            try FullTextIndex.drop(db, collection: collection)
        }
    }
}
