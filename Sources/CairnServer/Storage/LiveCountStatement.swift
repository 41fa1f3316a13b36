import CairnProtocol
import CairnSQL

/// How many live records of a collection match a filter, counting to a limit at most: one statement for every
/// backend.
struct LiveCountStatement: Sendable {
    /// The query; its one column is the count.
    let sql: String
    /// Its arguments, in placeholder order.
    let arguments: [SQLArgument]

    /// The count's query in `dialect`.
    init<Dialect: RecordsDialect>(project: String, collection: CollectionSchema, filter: Filter?, limit: Int?, dialect: Dialect) throws(ErrorBody) {
        var builder = RecordsStatementBuilder(dialect, collection: collection)
        var sql = """
            SELECT count(*) FROM (SELECT 1 FROM records WHERE project = \(builder.bind(.text(project))) \
            AND collection = \(builder.bind(.text(collection.name))) AND NOT deleted AND \(try builder.filter(filter, document: "data"))
            """
        if let limit { sql += " LIMIT \(builder.bind(.integer(Int64(limit))))" }
        self.sql = sql + ") live"
        self.arguments = builder.arguments
    }
}
