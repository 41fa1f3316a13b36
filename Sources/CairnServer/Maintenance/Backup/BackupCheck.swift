import CairnProtocol
import Foundation
import GRDB

/// The checks and file steps ``ServerBackup`` and ``ServerRestore`` share.
enum BackupCheck {
    /// A row of the `files` table whose bytes a backup holds.
    struct StoredBytes: Sendable, Hashable {
        var project: String
        var id: String
        var size: Int64
        var sha256: String?
        var status: String

        /// Whether its bytes are whole and can no longer change.
        var isCompleted: Bool { status == FileStatus.completed.rawValue }

        /// The rows of `files` in `db` that have bytes (`new` and `completed`).
        static func all(_ db: Database) throws -> [StoredBytes] {
            try Row.fetchAll(db, sql: "SELECT project, id, size, sha256, status FROM files WHERE status IN ('new', 'completed')").map {
                StoredBytes(project: $0["project"], id: $0["id"], size: $0["size"], sha256: $0["sha256"], status: $0["status"])
            }
        }
    }

    /// Runs `PRAGMA integrity_check` (or `quick_check`) and throws `internal_error` with what it found unless it
    /// answers `ok`.
    static func integrity(_ db: Database, pragma: String, of path: String) throws {
        let findings = try String.fetchAll(db, sql: "PRAGMA \(pragma)")
        guard findings != ["ok"] else { return }
        throw ErrorBody(
            code: .internalError, message: "\(path) fails SQLite's \(pragma): \(findings.prefix(5).joined(separator: "; "))")
    }

    /// Syncs a file to disk.
    static func synchronize(_ url: URL) throws {
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.synchronize()
    }

    /// A file's size in bytes.
    static func size(of url: URL) throws -> Int64 {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value ?? 0
    }
}
