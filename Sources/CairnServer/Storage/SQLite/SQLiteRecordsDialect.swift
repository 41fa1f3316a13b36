import CairnProtocol
import CairnSQL

/// How SQLite's statements over `records` read: `?` placeholders, JSON fields through SQLite's own functions.
struct SQLiteRecordsDialect: RecordsDialect {
    func placeholder(_ position: Int) -> String { "?" }

    var alwaysTrue: String { "1" }

    func compile(_ filter: Filter, collection: CollectionSchema, document: String, asOf: String? = nil, firstPlaceholder: Int) throws(ErrorBody) -> CompiledFilter {
        let read: (FieldSchema, String) -> FieldAccess = { SQLiteDialect().jsonMember($0.name, of: $1) }
        let fields = RuleFields.reader(for: collection, document: document, read)
        return try FilterSQL.compile(
            filter, collection: collection, dialect: .sqlite, firstPlaceholder: firstPlaceholder, fieldExpression: fields,
            pathExpression: FollowedReference.reader(
                collection: collection, document: FollowedReference.qualified(document), asOf: asOf, read: read))
    }
}
