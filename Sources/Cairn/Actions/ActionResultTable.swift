import CairnProtocol
import Foundation
import GRDB

/// The outcomes of queued action calls (`cairn_action_results`), by idempotency key: the backend's answer or the
/// refusal, kept until the app removes them.
struct ActionResultTable: StoreTable {
    var tableNames: [String] { ["cairn_action_results"] }

    /// Migration v9.
    static func createV9(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_action_results (
                key TEXT PRIMARY KEY NOT NULL,
                action TEXT NOT NULL,
                arguments TEXT NOT NULL,
                result TEXT,
                error TEXT,
                http_status INTEGER,
                completed_at REAL NOT NULL
            )
            """)
    }

    /// Stores an outcome (replacing one stored under the same key).
    func save(_ db: Database, _ outcome: ActionResult) throws {
        let errorText = try outcome.error.map { String(decoding: try CairnJSON.encode($0), as: UTF8.self) }
        try db.execute(sql: """
            INSERT OR REPLACE INTO cairn_action_results (key, action, arguments, result, error, http_status, completed_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, arguments: [
                outcome.key, outcome.action, outcome.arguments.jsonText(), outcome.result?.jsonText(), errorText, outcome.httpStatus,
                outcome.completedAt.timeIntervalSince1970,
            ])
    }

    /// Every outcome, oldest first.
    func all(_ db: Database) throws -> [ActionResult] {
        try Row.fetchAll(db, sql: "SELECT * FROM cairn_action_results ORDER BY completed_at, key").map { row in
            let resultText: String? = row["result"]
            let errorText: String? = row["error"]
            return ActionResult(
                key: row["key"], action: row["action"], arguments: try JSONValue(parsing: Array((row["arguments"] as String).utf8)),
                result: try resultText.map { try JSONValue(parsing: Array($0.utf8)) },
                error: try errorText.map { try CairnJSON.decode(ErrorBody.self, from: Array($0.utf8)) }, httpStatus: row["http_status"],
                completedAt: Date(timeIntervalSince1970: row["completed_at"]))
        }
    }

    /// Removes the outcomes with these keys (every one when `nil`); returns how many went.
    func remove(_ db: Database, keys: Set<String>?) throws -> Int {
        if let keys {
            try db.execute(
                sql: "DELETE FROM cairn_action_results WHERE key IN (SELECT value FROM json_each(?))",
                arguments: [JSONValue.array(keys.sorted().map(JSONValue.string)).jsonText()])
        } else {
            try db.execute(sql: "DELETE FROM cairn_action_results")
        }
        return db.changesCount
    }
}
