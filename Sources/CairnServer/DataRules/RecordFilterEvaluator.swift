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

    /// An evaluator with its own in-memory database, whose `records` table holds the referenced records of the one
    /// evaluation under way (rules that follow a reference read them as the feed reads the server's own `records`).
    init() throws {
        database = try DatabaseQueue()
        try database.writeWithoutTransaction { db in
            SQLiteFunctions.register(db)
            try db.execute(sql: "CREATE TABLE records (project TEXT NOT NULL, collection TEXT NOT NULL, id TEXT NOT NULL, deleted INTEGER NOT NULL, data TEXT NOT NULL)")
        }
    }

    /// `filter` compiled as this evaluator runs it, over a record's JSON column `data`: what checks a rule's SQL with
    /// the semantics every backend shares (a field of a referenced record included, ``FollowedReference``).
    static func compile(_ filter: Filter, collection: CollectionSchema) throws(ErrorBody) -> CompiledFilter {
        let read: (FieldSchema, String) -> FieldAccess = { SQLiteDialect().jsonMember($0.name, of: $1) }
        return try FilterSQL.compile(
            filter, collection: collection, dialect: .sqlite, fieldExpression: { read($0, "data") },
            pathExpression: FollowedReference.reader(collection: collection, document: "records.data", read: read))
    }

    /// Whether `filter` matches a record whose data is `dataText` (a JSON object's text); `validation_failed` when
    /// the filter does not fit the collection.
    /// - Parameter referenced: the live records its `reference` fields name, as JSON text by collection and id: what a
    ///   rule that follows a reference (`site.region`) reads. A record not given counts as not there.
    func matches(
        _ filter: Filter, collection: CollectionSchema, id: String = "", dataText: String, referenced: [String: [String: String]] = [:]
    ) throws -> Bool {
        try evaluate([filter], collection: collection, id: id, dataText: dataText, referenced: referenced)[0]
    }

    /// Each filter's verdict on one record, in one statement (see ``matches(_:collection:id:dataText:referenced:)``).
    func evaluate(
        _ filters: [Filter], collection: CollectionSchema, id: String = "", dataText: String, referenced: [String: [String: String]] = [:]
    ) throws -> [Bool] {
        guard !filters.isEmpty else { return [] }
        var columns: [String] = []
        var arguments: [DatabaseValue] = []
        for filter in filters {
            let compiled = try Self.compile(filter, collection: collection)
            columns.append("COALESCE(\(compiled.sql), 0)")
            arguments += compiled.arguments.map(\.databaseValue)
        }
        // Placeholders in the order they appear: each filter's, then the record's id and data.
        arguments += [id.databaseValue, dataText.databaseValue]
        let sql = "SELECT \(columns.joined(separator: ", ")) FROM (SELECT ? AS id, ? AS data, '' AS project) AS records"
        let statementArguments = StatementArguments(arguments)
        let verdicts: @Sendable (Database) throws -> [Bool] = { db in
            guard let row = try Row.fetchOne(db, sql: sql, arguments: statementArguments) else { return [] }
            return (0..<filters.count).map { row[$0] as Bool? ?? false }
        }
        guard !referenced.isEmpty else { return try database.read(verdicts) }
        return try database.write { db in
            defer { try? db.execute(sql: "DELETE FROM records") }
            for (target, records) in referenced {
                for (targetID, text) in records {
                    try db.execute(sql: "INSERT INTO records VALUES ('', ?, ?, 0, ?)", arguments: [target, targetID, text])
                }
            }
            return try verdicts(db)
        }
    }
}
