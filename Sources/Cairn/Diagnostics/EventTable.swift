import CairnProtocol
import Foundation
import GRDB

/// The persisted history of sync runs, one event each (`cairn_events`), bounded to the newest runs.
struct EventTable: StoreTable {
    var tableNames: [String] { ["cairn_events"] }

    /// Its part of the first migration.
    static func createV1(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_events (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                kind TEXT NOT NULL,
                started_at REAL NOT NULL,
                ended_at REAL,
                pushed INTEGER NOT NULL DEFAULT 0,
                pulled INTEGER NOT NULL DEFAULT 0,
                conflicts INTEGER NOT NULL DEFAULT 0,
                failed INTEGER NOT NULL DEFAULT 0,
                error TEXT
            )
            """)
    }

    /// Notes that a run of `kind` started; returns its id.
    func begin(_ db: Database, kind: SyncKind, at date: Date) throws -> Int64 {
        try db.execute(sql: "INSERT INTO cairn_events (kind, started_at) VALUES (?, ?)", arguments: [kind.rawValue, date.timeIntervalSince1970])
        return db.lastInsertedRowID
    }

    /// Notes how run `id` ended, and forgets all but the newest `keep` runs.
    func end(_ db: Database, id: Int64, summary: SyncSummary, error: String?, at date: Date, keep: Int) throws {
        try db.execute(sql: """
            UPDATE cairn_events SET ended_at = ?, pushed = ?, pulled = ?, conflicts = ?, failed = ?, error = ? WHERE id = ?
            """, arguments: [date.timeIntervalSince1970, summary.pushed, summary.pulled, summary.conflicts, summary.failed, error, id])
        try db.execute(sql: "DELETE FROM cairn_events WHERE id <= (SELECT max(id) - ? FROM cairn_events)", arguments: [keep])
    }

    /// The newest `limit` runs, newest first.
    func entries(_ db: Database, limit: Int) throws -> [SyncHistoryEntry] {
        try Row.fetchAll(db, sql: "SELECT * FROM cairn_events ORDER BY id DESC LIMIT ?", arguments: [limit]).map { row throws in
            let ended: Double? = row["ended_at"]
            return SyncHistoryEntry(
                id: row["id"], kind: try StoredEnum.read(row["kind"], column: "cairn_events.kind"), startedAt: Date(timeIntervalSince1970: row["started_at"]),
                endedAt: ended.map(Date.init(timeIntervalSince1970:)),
                summary: SyncSummary(pushed: row["pushed"], pulled: row["pulled"], conflicts: row["conflicts"], failed: row["failed"]),
                error: row["error"])
        }
    }
}
