import CairnProtocol
import Foundation
import GRDB

/// The durable file upload jobs (`cairn_file_uploads`): one row per file the app queued, from `queued` through
/// `completed` (or `failed`), with the server's file id once it made the slot, and the record field the file is
/// attached to. Rows of completed files stay as the map from local ids to server ids.
struct FileUploadTable: StoreTable {
    var tableNames: [String] { ["cairn_file_uploads"] }

    static func createV3(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_file_uploads (
                local_id TEXT PRIMARY KEY NOT NULL,
                name TEXT NOT NULL,
                content_type TEXT NOT NULL,
                size INTEGER NOT NULL,
                sha256 TEXT NOT NULL,
                tags TEXT NOT NULL,
                public INTEGER NOT NULL,
                attach_collection TEXT,
                attach_id TEXT,
                attach_field TEXT,
                underlying TEXT,
                path TEXT NOT NULL,
                state TEXT NOT NULL,
                server_id TEXT,
                attached_version INTEGER,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at REAL NOT NULL DEFAULT 0,
                error_code TEXT,
                error_message TEXT,
                created_at REAL NOT NULL
            );
            CREATE INDEX cairn_file_uploads_state ON cairn_file_uploads(state, created_at);
            CREATE INDEX cairn_file_uploads_target ON cairn_file_uploads(attach_collection, attach_id);
            CREATE UNIQUE INDEX cairn_file_uploads_server ON cairn_file_uploads(server_id) WHERE server_id IS NOT NULL;
            """)
    }

    /// Migration v12: an upload's source and permissions (`NULL`: project-wide), sent when the file is created.
    static func addSourceAndPermissionsV12(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE cairn_file_uploads ADD COLUMN source TEXT; ALTER TABLE cairn_file_uploads ADD COLUMN permissions TEXT")
    }

    func insert(_ db: Database, _ job: FileUploadJob) throws {
        try db.execute(sql: """
            INSERT INTO cairn_file_uploads (local_id, name, content_type, size, sha256, tags, public, attach_collection, attach_id,
            attach_field, path, state, created_at, source, permissions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [
                job.localID, job.name, job.contentType, job.size, job.sha256, JSONValue.array(job.tags.map { .string($0) }).jsonText(),
                job.isPublic, job.attachTo?.collection, job.attachTo?.id, job.attachTo?.field, job.path, job.state.rawValue,
                job.createdAt.timeIntervalSince1970, job.source,
                job.permissions == .project ? nil : String(decoding: try CairnJSON.encode(job.permissions), as: UTF8.self),
            ])
    }

    func job(_ db: Database, localID: String) throws -> FileUploadJob? {
        try Row.fetchOne(db, sql: "SELECT * FROM cairn_file_uploads WHERE local_id = ?", arguments: [localID]).map(FileUploadJob.init(row:))
    }

    /// The job that made the server file `serverID`, if this device uploaded it.
    func job(_ db: Database, serverID: String) throws -> FileUploadJob? {
        try Row.fetchOne(db, sql: "SELECT * FROM cairn_file_uploads WHERE server_id = ?", arguments: [serverID]).map(FileUploadJob.init(row:))
    }

    /// Jobs in `states`, oldest first.
    func jobs(_ db: Database, in states: [FileUploadState]) throws -> [FileUploadJob] {
        try Row.fetchAll(db, sql: """
            SELECT * FROM cairn_file_uploads WHERE state IN (SELECT value FROM json_each(?)) ORDER BY created_at, local_id
            """, arguments: [JSONValue.array(states.map { .string($0.rawValue) }).jsonText()]).map(FileUploadJob.init(row:))
    }

    /// How many jobs are in each state.
    func counts(_ db: Database) throws -> [FileUploadState: Int] {
        var counts: [FileUploadState: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT state, count(*) FROM cairn_file_uploads GROUP BY state") {
            if let state = FileUploadState(rawValue: row[0]) { counts[state] = row[1] }
        }
        return counts
    }

    /// Stores the SHA-256 of the job's bytes, computed before its first upload.
    func setSHA256(_ db: Database, localID: String, sha256: String) throws {
        try db.execute(sql: "UPDATE cairn_file_uploads SET sha256 = ? WHERE local_id = ?", arguments: [sha256, localID])
    }

    /// Notes the server's id for the job's file slot (`nil` forgets a slot the server no longer has).
    func setServerID(_ db: Database, localID: String, serverID: String?) throws {
        try db.execute(sql: "UPDATE cairn_file_uploads SET server_id = ? WHERE local_id = ?", arguments: [serverID, localID])
    }

    /// Marks the job completed at the server, with the record version its attachment was set at.
    func complete(_ db: Database, localID: String, attachedVersion: Int64?) throws {
        try db.execute(sql: """
            UPDATE cairn_file_uploads SET state = 'completed', attached_version = ?, error_code = NULL, error_message = NULL
            WHERE local_id = ?
            """, arguments: [attachedVersion, localID])
    }

    /// Counts a failed attempt and sets when the next may start.
    func noteAttempt(_ db: Database, localID: String, error: ErrorBody, retryAt: Date) throws {
        try db.execute(sql: """
            UPDATE cairn_file_uploads SET attempts = attempts + 1, next_attempt_at = ?, error_code = ?, error_message = ? WHERE local_id = ?
            """, arguments: [retryAt.timeIntervalSince1970, error.code.rawValue, error.message, localID])
    }

    /// Moves the job to the failed list with the reason.
    func fail(_ db: Database, localID: String, error: ErrorBody) throws {
        try db.execute(sql: """
            UPDATE cairn_file_uploads SET state = 'failed', error_code = ?, error_message = ? WHERE local_id = ?
            """, arguments: [error.code.rawValue, error.message, localID])
    }

    /// Puts a failed job back in the queue, to start now.
    func retry(_ db: Database, localID: String) throws -> Bool {
        try db.execute(sql: """
            UPDATE cairn_file_uploads SET state = 'queued', attempts = 0, next_attempt_at = 0, error_code = NULL, error_message = NULL
            WHERE local_id = ? AND state = 'failed'
            """, arguments: [localID])
        return db.changesCount == 1
    }

    func remove(_ db: Database, localID: String) throws {
        try db.execute(sql: "DELETE FROM cairn_file_uploads WHERE local_id = ?", arguments: [localID])
    }

    /// The attachments a collection's visible rows should show: queued and failed jobs (their local id), and
    /// completed ones (their server id) until a pulled server state reaches their attached version.
    func overlays(_ db: Database, collection: String) throws -> [FileOverlay] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT local_id, attach_id, attach_field, CASE WHEN state = 'completed' THEN server_id ELSE local_id END, state,
            attached_version, underlying FROM cairn_file_uploads
            WHERE attach_collection = ? AND (state IN ('queued', 'failed') OR (state = 'completed' AND server_id IS NOT NULL))
            ORDER BY created_at
            """), arguments: [collection]).map { row in
            FileOverlay(
                localID: row[0], recordID: row[1], field: row[2], value: row[3], completed: row[4] == "completed", attachedVersion: row[5],
                underlying: (row[6] as String?).flatMap { try? JSONValue(parsing: $0) })
        }
    }

    /// Whether any job attaches to a record of `collection` (a cheap test before ``overlays(_:collection:)``).
    func hasOverlays(_ db: Database, collection: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM cairn_file_uploads WHERE attach_collection = ? LIMIT 1"),
                          arguments: [collection]) ?? false
    }

    /// Keeps the value an overlay hides, to show again if the upload is discarded.
    func setUnderlying(_ db: Database, localID: String, _ value: JSONValue?) throws {
        try db.execute(sql: "UPDATE cairn_file_uploads SET underlying = ? WHERE local_id = ?", arguments: [value?.jsonText(), localID])
    }

    /// Forgets the attachment of completed jobs whose attachment a pulled server state reached.
    func settle(_ db: Database, localIDs: [String]) throws {
        guard !localIDs.isEmpty else { return }
        try db.execute(sql: """
            UPDATE cairn_file_uploads SET attach_collection = NULL, attach_id = NULL, attach_field = NULL, underlying = NULL
            WHERE local_id IN (SELECT value FROM json_each(?))
            """, arguments: [JSONValue.array(localIDs.map { .string($0) }).jsonText()])
    }

    /// The server id of a completed upload, by its local id.
    func serverID(_ db: Database, localID: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT server_id FROM cairn_file_uploads WHERE local_id = ? AND state = 'completed'"),
                            arguments: [localID])
    }
}

/// A record field that shows a file before the pulled server state does.
struct FileOverlay: Sendable {
    var localID: String
    var recordID: String
    var field: String
    /// The local id while the upload is pending, the server id once completed.
    var value: String
    var completed: Bool
    var attachedVersion: Int64?
    /// The value the field held before (`nil`: absent).
    var underlying: JSONValue?
}

/// Where a queued file upload stands.
public enum FileUploadState: String, Sendable, Codable, CaseIterable {
    /// Waiting to run (or running): for its record to be pushed, for the network, or for a free upload slot.
    case queued
    /// Stopped: the server refused the file, or it kept failing; ``CairnFiles/retry(_:)`` or ``CairnFiles/discard(_:)``.
    case failed
    /// The server has every byte, verified, and set the attached record field.
    case completed
}

/// A file upload the app queued, as the local store keeps it.
struct FileUploadJob: Sendable, Hashable {
    var localID: String
    var name: String
    var contentType: String
    var size: Int64
    var sha256: String
    var tags: [String]
    var isPublic: Bool
    var attachTo: FileAttachment?
    /// Where the file came from, in the app's words.
    var source: String?
    /// Who may see it on the server.
    var permissions: FilePermissions = .project
    /// The local copy, relative to the store's files folder.
    var path: String
    var state: FileUploadState
    var serverID: String?
    var attachedVersion: Int64?
    var attempts: Int
    var nextAttemptAt: Date
    var error: ErrorBody?
    var createdAt: Date

    init(
        localID: String, name: String, contentType: String, size: Int64, sha256: String, tags: [String], isPublic: Bool,
        attachTo: FileAttachment?, path: String, createdAt: Date
    ) {
        self.localID = localID
        self.name = name
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
        self.tags = tags
        self.isPublic = isPublic
        self.attachTo = attachTo
        self.path = path
        self.state = .queued
        self.attempts = 0
        self.nextAttemptAt = .distantPast
        self.createdAt = createdAt
    }

    init(row: Row) {
        localID = row["local_id"]
        name = row["name"]
        contentType = row["content_type"]
        size = row["size"]
        sha256 = row["sha256"]
        tags = ((try? JSONValue(parsing: row["tags"] as String))?.arrayValue ?? []).compactMap(\.stringValue)
        isPublic = row["public"]
        source = row["source"]
        if let text: String = row["permissions"], let decoded = try? CairnJSON.decode(FilePermissions.self, from: Data(text.utf8)) {
            permissions = decoded
        }
        if let collection: String = row["attach_collection"], let id: String = row["attach_id"], let field: String = row["attach_field"] {
            attachTo = FileAttachment(collection: collection, id: id, field: field)
        }
        path = row["path"]
        state = FileUploadState(rawValue: row["state"]) ?? .failed
        serverID = row["server_id"]
        attachedVersion = row["attached_version"]
        attempts = row["attempts"]
        nextAttemptAt = Date(timeIntervalSince1970: row["next_attempt_at"])
        if let code: String = row["error_code"] {
            error = ErrorBody(code: ErrorCode(code), message: row["error_message"] ?? "")
        }
        createdAt = Date(timeIntervalSince1970: row["created_at"])
    }
}
