import CairnProtocol
import Foundation
import GRDB

/// The durable file deletions (`cairn_file_deletions`): one row per server file the app deleted, `queued` until a
/// sync's push removes it on the server (the row then goes), or `failed` when the server refused it.
struct FileDeletionTable: StoreTable {
    var tableNames: [String] { ["cairn_file_deletions"] }

    static func createV6(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_file_deletions (
                file_id TEXT PRIMARY KEY NOT NULL,
                state TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                error_code TEXT,
                error_message TEXT,
                created_at REAL NOT NULL
            );
            CREATE INDEX cairn_file_deletions_state ON cairn_file_deletions(state, created_at);
            """)
    }

    /// Queues the deletion of `fileID` (a deletion already queued or failed is queued again).
    func insert(_ db: Database, fileID: String, at date: Date) throws {
        try db.execute(sql: """
            INSERT INTO cairn_file_deletions (file_id, state, created_at) VALUES (?, 'queued', ?)
            ON CONFLICT(file_id) DO UPDATE SET state = 'queued', attempts = 0, error_code = NULL, error_message = NULL
            """, arguments: [fileID, date.timeIntervalSince1970])
    }

    /// Deletions in `states`, oldest first.
    func deletions(_ db: Database, in states: [FileUploadState]) throws -> [FileDeletion] {
        try Row.fetchAll(db, sql: """
            SELECT * FROM cairn_file_deletions WHERE state IN (SELECT value FROM json_each(?)) ORDER BY created_at, file_id
            """, arguments: [JSONValue.array(states.map { .string($0.rawValue) }).jsonText()]).map(FileDeletion.init(row:))
    }

    /// Whether a deletion of `fileID` is queued or failed.
    /// Whether a deletion waits to be sent.
    func hasQueued(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS(SELECT 1 FROM cairn_file_deletions WHERE state = 'queued')") ?? false
    }

    func contains(_ db: Database, fileID: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT 1 FROM cairn_file_deletions WHERE file_id = ?", arguments: [fileID]) ?? false
    }

    /// Counts a failed attempt.
    func noteAttempt(_ db: Database, fileID: String, error: ErrorBody) throws {
        try db.execute(sql: """
            UPDATE cairn_file_deletions SET attempts = attempts + 1, error_code = ?, error_message = ? WHERE file_id = ?
            """, arguments: [error.code.rawValue, error.message, fileID])
    }

    /// Moves the deletion to the failed list with the reason.
    func fail(_ db: Database, fileID: String, error: ErrorBody) throws {
        try db.execute(sql: """
            UPDATE cairn_file_deletions SET state = 'failed', attempts = attempts + 1, error_code = ?, error_message = ? WHERE file_id = ?
            """, arguments: [error.code.rawValue, error.message, fileID])
    }

    /// Puts a failed deletion back in the queue.
    func retry(_ db: Database, fileID: String) throws -> Bool {
        try db.execute(sql: """
            UPDATE cairn_file_deletions SET state = 'queued', attempts = 0, error_code = NULL, error_message = NULL
            WHERE file_id = ? AND state = 'failed'
            """, arguments: [fileID])
        return db.changesCount == 1
    }

    /// Forgets the deletion (done, or discarded); true when there was one.
    @discardableResult
    func remove(_ db: Database, fileID: String) throws -> Bool {
        try db.execute(sql: "DELETE FROM cairn_file_deletions WHERE file_id = ?", arguments: [fileID])
        return db.changesCount == 1
    }
}

/// A server file deletion queued on this device: ``CairnFiles/delete(_:detachFrom:)`` queues it, a sync's push
/// sends it.
public struct FileDeletion: Sendable, Hashable, Identifiable {
    /// The server id of the file.
    public var id: String
    /// `queued` until a sync sends it, `failed` when the server refused it (``CairnFiles/retry(_:)``,
    /// ``CairnFiles/discard(_:)``).
    public var state: FileUploadState
    /// Failed attempts so far.
    public var attempts: Int
    /// Why the last attempt failed.
    public var error: ErrorBody?
    /// When it was queued.
    public var createdAt: Date

    init(row: Row) {
        id = row["file_id"]
        state = FileUploadState(rawValue: row["state"]) ?? .failed
        attempts = row["attempts"]
        if let code: String = row["error_code"] {
            error = ErrorBody(code: ErrorCode(code), message: row["error_message"] ?? "")
        }
        createdAt = Date(timeIntervalSince1970: row["created_at"])
    }
}
