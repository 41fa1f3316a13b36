import CairnProtocol
import CairnSQL

/// How PostgreSQL's statements over `records` read: numbered placeholders, JSON fields as `jsonb`, ids compared by
/// bytes (`COLLATE "C"`, as on SQLite).
struct PostgresRecordsDialect: RecordsDialect {
    func placeholder(_ position: Int) -> String { "$\(position)" }

    var alwaysTrue: String { "true" }

    func compile(_ filter: Filter, collection: CollectionSchema, document: String, firstPlaceholder: Int) throws(ErrorBody) -> CompiledFilter {
        try FilterSQL.compile(
            filter, collection: collection, dialect: .postgres, idExpression: "(id COLLATE \"C\")", firstPlaceholder: firstPlaceholder,
            fieldExpression: RuleFields.reader(for: collection, document: document) { PostgresDialect().field($0, of: "\($1)::jsonb") })
    }
}
