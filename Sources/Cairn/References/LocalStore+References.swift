import CairnProtocol
import GRDB

extension LocalStore {
    /// The records of `field`'s collection that the records `query` selects name in their `reference` field `field`,
    /// by id.
    func related(_ query: Query, via field: String) throws -> [LocalRecord] {
        try writer.read { db in
            let source = try table(query.collection)
            let target = try referencedTable(source, field)
            let compiled = try compile(db, query)
            let sql = "SELECT \(LocalQuerySQL.recordColumns) FROM \(target.quotedName) AS t WHERE t.id IN "
                + "(SELECT t.\(CollectionTable.quote(field))\(compiled.fromWhere)\(compiled.orderLimit)) ORDER BY t.id"
            return try LocalQuerySQL.fetchRecords(db, sql: sql, arguments: compiled.arguments)
        }
    }

    /// The records of `collection` whose `reference` field `field` names one of the records `query` selects, by id.
    func referrers(of query: Query, in collection: String, via field: String) throws -> [LocalRecord] {
        try writer.read { db in
            let source = try table(collection)
            let target = try referencedTable(source, field)
            guard target.name == query.collection else {
                throw CairnError.invalid("\(collection).\(field) names records of \(target.name), not of \(query.collection)")
            }
            let compiled = try compile(db, query)
            let sql = "SELECT \(LocalQuerySQL.recordColumns) FROM \(source.quotedName) AS t WHERE t.\(CollectionTable.quote(field)) IN "
                + "(SELECT t.id\(compiled.fromWhere)\(compiled.orderLimit)) ORDER BY t.id"
            return try LocalQuerySQL.fetchRecords(db, sql: sql, arguments: compiled.arguments)
        }
    }

    /// The table of the collection `source`'s `reference` field `field` names; `invalid_argument` for another field.
    private func referencedTable(_ source: CollectionTable, _ field: String) throws -> CollectionTable {
        guard let declared = source.schema.field(named: field), declared.type == .reference, let target = declared.collection else {
            throw CairnError.invalid("\(field) is not a reference field of \(source.name)")
        }
        return try table(target)
    }
}
