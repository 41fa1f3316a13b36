import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    /// Inserts the backup's row; the same backup recorded again changes nothing.
    public func recordBackup(_ backup: BackupSummary) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO backups (created_at, path, database_bytes, file_count) VALUES (?, ?, ?, ?)
                    ON CONFLICT (created_at, path) DO NOTHING
                    """,
                arguments: [backup.createdAt.epochSeconds, backup.path, backup.databaseBytes, backup.fileCount])
        }
    }

    /// Reads the newest backups from a WAL snapshot.
    public func backups(limit: Int) async throws -> [BackupSummary] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT created_at, path, database_bytes, file_count FROM backups ORDER BY created_at DESC, path LIMIT ?",
                arguments: [max(0, limit)]
            ).map { row in
                BackupSummary(
                    createdAt: Date(timeIntervalSince1970: row["created_at"]), path: row["path"], databaseBytes: row["database_bytes"],
                    fileCount: row["file_count"])
            }
        }
    }
}
