import CairnProtocol
import CairnSQL

/// How PostgreSQL's statements over `records` read: numbered placeholders, JSON fields as `jsonb`, ids compared by
/// bytes (`COLLATE "C"`, as on SQLite).
struct PostgresRecordsDialect: RecordsDialect {
    func placeholder(_ position: Int) -> String { "$\(position)" }

    var alwaysTrue: String { "true" }

    func compile(_ filter: Filter, collection: CollectionSchema, document: String, asOf: String? = nil, firstPlaceholder: Int) throws(ErrorBody) -> CompiledFilter {
        let read: (FieldSchema, String) -> FieldAccess = { PostgresDialect().field($0, of: "\($1)::jsonb") }
        let fields = RuleFields.reader(for: collection, document: document, read)
        return try FilterSQL.compile(
            filter, collection: collection, dialect: .postgres, idExpression: "(id COLLATE \"C\")", firstPlaceholder: firstPlaceholder,
            fieldExpression: fields,
            pathExpression: FollowedReference.reader(
                collection: collection, document: FollowedReference.qualified(document), asOf: asOf, read: read))
    }
}
