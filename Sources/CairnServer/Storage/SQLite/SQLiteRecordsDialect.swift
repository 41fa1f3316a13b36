import CairnProtocol
import CairnSQL

/// How SQLite's statements over `records` read: `?` placeholders, JSON fields through SQLite's own functions.
struct SQLiteRecordsDialect: RecordsDialect {
    func placeholder(_ position: Int) -> String { "?" }

    var alwaysTrue: String { "1" }

    func compile(_ filter: Filter, collection: CollectionSchema, document: String, firstPlaceholder: Int) throws(ErrorBody) -> CompiledFilter {
        try FilterSQL.compile(
            filter, collection: collection, dialect: .sqlite, firstPlaceholder: firstPlaceholder,
            fieldExpression: RuleFields.reader(for: collection, document: document) { SQLiteDialect().jsonMember($0.name, of: $1) })
    }
}
