import CairnProtocol
import CairnSQL
import GRDB
import Synchronization

/// Evaluates filters against one record's JSON data, for the checks made on a single record: a write against the
/// user's write rule, and `explain`. It runs the filter's compiled SQL in a private in-memory SQLite database, so a
/// record is judged by the same SQL semantics as the feed (``FilterSQL``, whose dialects are tested to agree),
/// whatever the server's storage.
///
/// ```swift
/// let evaluator = try RecordFilterEvaluator()
/// try evaluator.matches(scope.write!, collection: jobs, dataText: #"{"assignee":"ana"}"#)   // true
/// ```
final class RecordFilterEvaluator: Sendable {
    private let database: DatabaseQueue
    private static let process = Mutex<RecordFilterEvaluator?>(nil)

    /// The evaluator this process shares (evaluations take microseconds, one at a time).
    static func shared() throws -> RecordFilterEvaluator {
        try process.withLock { evaluator in
            if let evaluator { return evaluator }
            let made = try RecordFilterEvaluator()
            evaluator = made
            return made
        }
    }

    /// An evaluator with its own in-memory database.
    init() throws {
        database = try DatabaseQueue()
        database.writeWithoutTransaction { db in SQLiteFunctions.register(db) }
    }

    /// Whether `filter` matches a record whose data is `dataText` (a JSON object's text); `validation_failed` when
    /// the filter does not fit the collection.
    func matches(_ filter: Filter, collection: CollectionSchema, id: String = "", dataText: String) throws -> Bool {
        try evaluate([filter], collection: collection, id: id, dataText: dataText)[0]
    }

    /// Each filter's verdict on one record, in one statement.
    func evaluate(_ filters: [Filter], collection: CollectionSchema, id: String = "", dataText: String) throws -> [Bool] {
        guard !filters.isEmpty else { return [] }
        var columns: [String] = []
        var arguments: [DatabaseValue] = []
        for filter in filters {
            let compiled = try FilterSQL.compile(filter, collection: collection, dialect: .sqlite) { field in
                SQLiteDialect().jsonMember(field.name, of: "data")
            }
            columns.append("COALESCE(\(compiled.sql), 0)")
            arguments += compiled.arguments.map(\.databaseValue)
        }
        // Placeholders in the order they appear: each filter's, then the record's id and data.
        arguments += [id.databaseValue, dataText.databaseValue]
        let sql = "SELECT \(columns.joined(separator: ", ")) FROM (SELECT ? AS id, ? AS data)"
        return try database.read { db in
            guard let row = try Row.fetchOne(db, sql: sql, arguments: StatementArguments(arguments)) else { return [] }
            return (0..<filters.count).map { row[$0] as Bool? ?? false }
        }
    }
}
