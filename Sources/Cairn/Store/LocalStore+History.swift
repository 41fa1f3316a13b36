import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    func beginHistory(kind: String, at date: Date = Date()) throws -> Int64 {
        try writer.write { db in
            try db.execute(sql: "INSERT INTO cairn_events (kind, started_at) VALUES (?, ?)", arguments: [kind, date.timeIntervalSince1970])
            return db.lastInsertedRowID
        }
    }

    func endHistory(_ id: Int64, summary: SyncSummary, error: String?, at date: Date = Date()) throws {
        try writer.write { db in
            try db.execute(sql: """
                UPDATE cairn_events SET ended_at = ?, pushed = ?, pulled = ?, conflicts = ?, failed = ?, error = ? WHERE id = ?
                """, arguments: [date.timeIntervalSince1970, summary.pushed, summary.pulled, summary.conflicts, summary.failed, error, id])
            // Keep the history bounded.
            try db.execute(sql: "DELETE FROM cairn_events WHERE id <= (SELECT max(id) - 1000 FROM cairn_events)")
        }
    }

    func history(limit: Int) throws -> [SyncHistoryEntry] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM cairn_events ORDER BY id DESC LIMIT ?", arguments: [limit]).map { row in
                let ended: Double? = row["ended_at"]
                return SyncHistoryEntry(
                    id: row["id"], kind: row["kind"], startedAt: Date(timeIntervalSince1970: row["started_at"]),
                    endedAt: ended.map(Date.init(timeIntervalSince1970:)),
                    summary: SyncSummary(pushed: row["pushed"], pulled: row["pulled"], conflicts: row["conflicts"], failed: row["failed"]),
                    error: row["error"])
            }
        }
    }

    func counts() throws -> (pending: Int, failed: Int) {
        try writer.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM cairn_queue") ?? 0, try Int.fetchOne(db, sql: "SELECT count(*) FROM cairn_failed") ?? 0)
        }
    }

    func conflicts(limit: Int) throws -> [ConflictRecord] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM cairn_conflicts ORDER BY id DESC LIMIT ?", arguments: [limit]).map { row in
                let server = decodeObject(row["server"])
                return ConflictRecord(
                    id: row["id"],
                    conflict: Conflict(collection: row["collection"], id: row["record_id"], base: decodeObject(row["base"]),
                                       local: decodeObject(row["local"]), server: server, serverVersion: row["server_version"]),
                    resolution: row["resolution"], resolved: decodeObject(row["resolved"]),
                    resolvedAt: Date(timeIntervalSince1970: row["resolved_at"]))
            }
        }
    }

    /// True when the last download of any collection was interrupted.
    func hasPendingDownload() throws -> Bool {
        try writer.read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM cairn_collections WHERE pulling = 1 OR needs_pull = 1)") ?? false }
    }
}
