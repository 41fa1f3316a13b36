import CairnProtocol
import Foundation
import GRDB

/// The action calls queued for upload (`cairn_queued_actions`), in order with the record writes of the upload queue:
/// each remembers the newest queue position when it was made (`after_seq`). A call is sent once every write at or
/// before that position has left the queue, and no write after it is uploaded before the call has its outcome
/// (``uploadBoundSQL``); a write never folds into a change queued before a call (``barrier(_:)``).
struct QueuedActionTable: StoreTable {
    var tableNames: [String] { ["cairn_queued_actions"] }

    /// Migration v9.
    static func createV9(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_queued_actions (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                key TEXT NOT NULL UNIQUE,
                action TEXT NOT NULL,
                arguments TEXT NOT NULL,
                after_seq INTEGER NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                created_at REAL NOT NULL
            )
            """)
    }

    /// The newest upload queue position a record write may take while calls wait: the position the oldest queued call
    /// was made after (the largest integer when none waits). For ``QueueTable/takeReady(_:limit:bytes:after:groups:)``.
    static let uploadBoundSQL = "coalesce((SELECT min(after_seq) FROM cairn_queued_actions), 9223372036854775807)"

    /// Queues a call after every change queued so far.
    func insert(_ db: Database, key: String, action: String, arguments: JSONValue, at date: Date) throws {
        try db.execute(sql: """
            INSERT INTO cairn_queued_actions (key, action, arguments, after_seq, created_at)
            VALUES (?, ?, ?, (SELECT coalesce(max(seq), 0) FROM cairn_queue), ?)
            """, arguments: [key, action, arguments.jsonText(), date.timeIntervalSince1970])
    }

    /// The newest queue position a queued call was made after (0 when none waits): a change queued at or before it
    /// takes no later write into it.
    func barrier(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(after_seq), 0) FROM cairn_queued_actions")) ?? 0
    }

    /// The oldest queued call when every write queued before it has left the upload queue, counting an attempt.
    func takeReady(_ db: Database) throws -> QueuedAction? {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT a.seq, a.key, a.action, a.arguments, a.created_at, a.attempts FROM cairn_queued_actions AS a
            WHERE a.seq = (SELECT min(seq) FROM cairn_queued_actions)
              AND NOT EXISTS (SELECT 1 FROM cairn_queue WHERE seq <= a.after_seq)
            """)
        else { return nil }
        try db.execute(sql: "UPDATE cairn_queued_actions SET attempts = attempts + 1 WHERE seq = ?", arguments: [row[0] as Int64])
        var action = try Self.action(row)
        action.attempts += 1
        return action
    }

    /// Every queued call, oldest first.
    func all(_ db: Database) throws -> [QueuedAction] {
        try Row.fetchAll(db, sql: "SELECT seq, key, action, arguments, created_at, attempts FROM cairn_queued_actions ORDER BY seq")
            .map(Self.action)
    }

    /// How many calls wait.
    func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM cairn_queued_actions") ?? 0
    }

    /// Removes the call with this key; true when there was one.
    @discardableResult
    func remove(_ db: Database, key: String) throws -> Bool {
        try db.execute(sql: "DELETE FROM cairn_queued_actions WHERE key = ?", arguments: [key])
        return db.changesCount == 1
    }

    private static func action(_ row: Row) throws -> QueuedAction {
        QueuedAction(
            key: row[1], action: row[2], arguments: try JSONValue(parsing: Array((row[3] as String).utf8)),
            createdAt: Date(timeIntervalSince1970: row[4]), attempts: row[5])
    }
}
