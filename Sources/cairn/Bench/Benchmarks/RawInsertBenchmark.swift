import CairnProtocol
import Foundation
import GRDB
import GRDBSQLite

/// The yardsticks of the SDK's figures: the same rows inserted into a table shaped like a collection's local table
/// (typed columns plus the record's JSON), with the store's durability settings (WAL, `synchronous = FULL`), in one
/// transaction. Pull and push are reported as ratios to them, which travel between machines where absolute rates do
/// not.
///
/// - ``floor()``: SQLite's C API, one prepared statement, bound values: what no SQLite-based store can beat.
/// - ``grdb()``: GRDB row by row with its argument boxing, the yardstick of earlier reports.
struct RawInsertBenchmark {
    let records: Int
    let directory: URL

    static let createTable = """
        CREATE TABLE items (id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT, count INTEGER, score REAL, done INTEGER,
        due TEXT, tags TEXT, cairn_data TEXT NOT NULL, cairn_version INTEGER NOT NULL DEFAULT 0)
        """
    static let insert = "INSERT INTO items (id, title, body, count, score, done, due, tags, cairn_data, cairn_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

    /// One row, made before the clock starts: this measures SQLite, as the SDK's pull gets its rows from the wire.
    struct Row {
        var id, title, body, due, tags, data: String
        var count: Int64
        var score: Double
        var done: Bool
        var version: Int64
    }

    func rows() -> [Row] {
        (0..<records).map { index in
            let record = SyncBenchmark.record(index)
            return Row(
                id: "item-\(index)", title: record["title"]?.stringValue ?? "", body: record["body"]?.stringValue ?? "",
                due: record["due"]?.stringValue ?? "", tags: record["tags"]?.jsonText() ?? "[]", data: JSONValue.object(record).jsonText(),
                count: record["count"]?.integerValue ?? 0, score: record["score"]?.numberValue ?? 0, done: record["done"]?.boolValue ?? false,
                version: Int64(index + 1))
        }
    }

    /// The medians of `rounds` runs of each yardstick, alternating (floor, GRDB, floor, ...): one run can land on the
    /// disk flushing what the bench wrote before it.
    func medians(rounds: Int = 3) throws -> (floor: Double, grdb: Double) {
        var floors: [Double] = []
        var grdbs: [Double] = []
        for round in 0..<rounds {
            floors.append(try floor(round: round))
            grdbs.append(try grdb(round: round))
        }
        return (floors.sorted()[rounds / 2], grdbs.sorted()[rounds / 2])
    }

    /// The database file of one run, removed (with its WAL) once measured.
    private func database(_ name: String, round: Int) -> (path: String, remove: () -> Void) {
        let path = directory.appendingPathComponent("\(name)-\(round).sqlite").path
        return (path, { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } })
    }

    /// Rows per second through SQLite's C API: `sqlite3_prepare_v2` once, then bind, step and reset per row.
    func floor(round: Int = 0) throws -> Double {
        let (path, remove) = database("sqlite-floor", round: round)
        defer { remove() }
        var connection: OpaquePointer?
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db = connection else {
            throw CLIError("cannot open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        func run(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw CLIError("SQLite: \(String(cString: sqlite3_errmsg(db)))") }
        }
        try run("PRAGMA journal_mode = WAL")
        try run("PRAGMA synchronous = FULL")
        try run(Self.createTable)
        let rows = rows()
        var prepared: OpaquePointer?
        guard sqlite3_prepare_v2(db, Self.insert, -1, &prepared, nil) == SQLITE_OK, let statement = prepared else {
            throw CLIError("SQLite: \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        // SQLITE_TRANSIENT: SQLite copies each text, as a C program binding short-lived buffers does.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        func bind(_ index: Int32, _ text: String) {
            var text = text
            text.withUTF8 { bytes in _ = sqlite3_bind_text(statement, index, bytes.baseAddress, Int32(bytes.count), transient) }
        }
        let start = ContinuousClock.now
        try run("BEGIN")
        for row in rows {
            bind(1, row.id)
            bind(2, row.title)
            bind(3, row.body)
            sqlite3_bind_int64(statement, 4, row.count)
            sqlite3_bind_double(statement, 5, row.score)
            sqlite3_bind_int64(statement, 6, row.done ? 1 : 0)
            bind(7, row.due)
            bind(8, row.tags)
            bind(9, row.data)
            sqlite3_bind_int64(statement, 10, row.version)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw CLIError("SQLite: \(String(cString: sqlite3_errmsg(db)))") }
            sqlite3_reset(statement)
        }
        try run("COMMIT")
        return Double(records) / BenchTiming.seconds(since: start)
    }

    /// Rows per second through GRDB: one statement, executed with boxed `StatementArguments` per row.
    func grdb(round: Int = 0) throws -> Double {
        let (path, remove) = database("raw-insert", round: round)
        defer { remove() }
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        defer { try? pool.close() }
        try pool.write { db in try db.execute(sql: Self.createTable) }
        let rows: [StatementArguments] = rows().map { row in
            [row.id, row.title, row.body, row.count, row.score, row.done, row.due, row.tags, row.data, row.version]
        }
        let start = ContinuousClock.now
        try pool.write { db in
            let statement = try db.makeStatement(sql: Self.insert)
            for arguments in rows { try statement.execute(arguments: arguments) }
        }
        return Double(records) / BenchTiming.seconds(since: start)
    }
}
