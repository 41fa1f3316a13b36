import CairnProtocol
import Foundation
import GRDB

/// The yardstick for the SDK's figures: plain GRDB inserting the same rows into a table shaped like a collection's
/// local table (typed columns plus the record's JSON), with the store's durability settings, in one transaction.
/// Pull and push are reported as ratios to it, which travel between machines where absolute rates do not.
struct RawInsertBenchmark {
    let records: Int
    let directory: URL

    /// Rows per second.
    func run() throws -> Double {
        let path = directory.appendingPathComponent("raw-insert.sqlite").path
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE items (id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT, count INTEGER, score REAL, done INTEGER,
                due TEXT, tags TEXT, cairn_data TEXT NOT NULL, cairn_version INTEGER NOT NULL DEFAULT 0)
                """)
        }
        // The rows are made before the clock starts: this measures SQLite, as the SDK's pull gets its rows from the wire.
        let rows: [StatementArguments] = (0..<records).map { index in
            let record = SyncBenchmark.record(index)
            return [
                "item-\(index)", record["title"]?.stringValue, record["body"]?.stringValue, record["count"]?.integerValue,
                record["score"]?.numberValue, record["done"]?.boolValue, record["due"]?.stringValue, record["tags"]?.jsonText(),
                JSONValue.object(record).jsonText(), index + 1,
            ]
        }
        let start = ContinuousClock.now
        try pool.write { db in
            let statement = try db.makeStatement(
                sql: "INSERT INTO items (id, title, body, count, score, done, due, tags, cairn_data, cairn_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            for arguments in rows { try statement.execute(arguments: arguments) }
        }
        let elapsed = ContinuousClock.now - start
        return Double(records) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
