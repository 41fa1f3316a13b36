import CairnProtocol
import CairnSQL
import GRDB

/// A ``Query`` compiled to parameterised SQL over its collection's table (aliased `t`), with the filter's values
/// bound as arguments and never spliced into the text. A full-text search joins the collection's FTS5 index and
/// orders by its rank.
///
/// ```swift
/// let compiled = try LocalQuerySQL(query, table: table, fullTextFields: ["title"])
/// let rows = try Row.fetchAll(db, sql: compiled.selectSQL(columns: "t.id"), arguments: compiled.arguments)
/// ```
struct LocalQuerySQL {
    /// `FROM ... WHERE ...`, without sorting.
    let fromWhere: String
    /// `ORDER BY ... LIMIT ...`.
    let orderLimit: String
    /// The bound values, in order.
    let arguments: StatementArguments

    /// The columns that make a ``LocalRecord``.
    static let recordColumns = "t.id, t.cairn_data, t.cairn_version, t.cairn_pending, t.cairn_updated_at, t.cairn_updated_by"

    /// Compiles `query`; `fullTextFields` are the collection's searched fields (`nil`: it has no full-text index).
    /// Filters and sorts may name paths inside `json` fields (`address.city`). Throws `validation_failed` for a filter or
    /// sort on an undeclared field, and `invalid_argument` for a search on
    /// a collection without a full-text index or a negative limit.
    ///
    /// A filter may name a field of a referenced record (`site.region`, ``ReferencePath``), read from the table
    /// `tables` gives for its collection.
    init(_ query: Query, table: CollectionTable, fullTextFields: [String]?, tables: @escaping (String) -> CollectionTable? = { _ in nil }) throws {
        var from = "\(table.quotedName) AS t"
        var conditions: [String] = []
        var values: [DatabaseValue] = []
        var order: [String] = []
        if let text = query.search, let match = FullTextIndex.matchExpression(text) {
            guard fullTextFields != nil else {
                throw CairnError.invalid("\(table.name) has no full-text index: call enableFullTextSearch(in:fields:) first")
            }
            let index = CollectionTable.quote(FullTextIndex.tableName(table.name))
            from += " JOIN \(index) AS f ON f.rowid = t.rowid"
            conditions.append("f.\(index) MATCH ?")
            values.append(match.databaseValue)
            order.append("f.rank")
        }
        if let filter = query.filter {
            let compiled: CompiledFilter
            do {
                compiled = try FilterSQL.compile(
                    filter, collection: table.schema, dialect: .sqlite, idExpression: "t.id",
                    fieldExpression: { table.fieldAccess($0, qualifier: "t") },
                    pathExpression: { name throws(ErrorBody) in try ReferencePath.resolve(name, from: table, qualifier: "t", tables: tables) })
            } catch {
                throw CairnError(wrapping: error)
            }
            conditions.append(compiled.sql)
            values += compiled.arguments.map(\.databaseValue)
        }
        for key in query.sort {
            guard let expression = try table.readExpression(key.field, qualifier: "t") else {
                throw CairnError(.validationFailed, "cannot sort by \"\(key.field)\": not a field of \(query.collection)")
            }
            order.append("\(expression) \(key.ascending ? "ASC" : "DESC")")
        }
        order.append("t.id ASC")
        var orderLimit = " ORDER BY " + order.joined(separator: ", ")
        if let limit = query.limit {
            guard limit >= 0, (query.offset ?? 0) >= 0 else { throw CairnError.invalid("limit and offset cannot be negative") }
            orderLimit += " LIMIT \(limit) OFFSET \(query.offset ?? 0)"
        } else if let offset = query.offset {
            guard offset >= 0 else { throw CairnError.invalid("limit and offset cannot be negative") }
            orderLimit += " LIMIT -1 OFFSET \(offset)"
        }
        fromWhere = " FROM \(from)" + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
        self.orderLimit = orderLimit
        arguments = StatementArguments(values)
    }

    /// The statement that reads the records.
    var recordsSQL: String { "SELECT \(Self.recordColumns)" + fromWhere + orderLimit }

    /// The statement that counts them (within the limit and offset).
    var countSQL: String { "SELECT COUNT(*) FROM (SELECT 1" + fromWhere + orderLimit + ")" }

    /// Reads the records a compiled statement selects.
    static func fetchRecords(_ db: Database, sql: String, arguments: StatementArguments) throws -> [LocalRecord] {
        try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            VisibleRow(id: row[0], data: decodeObject(row[1]) ?? [:], version: row[2], pending: row[3], updatedAt: row[4], updatedBy: row[5]).record
        }
    }
}
