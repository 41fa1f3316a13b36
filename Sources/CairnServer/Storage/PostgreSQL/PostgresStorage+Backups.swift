import CairnProtocol
import Foundation
import PostgresNIO

extension PostgresStorage {
    /// Inserts the backup's row; the same backup recorded again changes nothing.
    public func recordBackup(_ backup: BackupSummary) async throws {
        try await client.query(
            """
            INSERT INTO backups (created_at, path, database_bytes, file_count)
            VALUES (\(backup.createdAt.epochSeconds), \(backup.path), \(backup.databaseBytes), \(Int64(backup.fileCount)))
            ON CONFLICT (created_at, path) DO NOTHING
            """, logger: logger)
    }

    /// The newest backups, in one statement.
    public func backups(limit: Int) async throws -> [BackupSummary] {
        let rows = try await client.query(
            """
            SELECT created_at, path, database_bytes, file_count FROM backups ORDER BY created_at DESC, path LIMIT \(max(0, limit))
            """, logger: logger)
        var backups: [BackupSummary] = []
        for try await (created, path, bytes, files) in rows.decode((Double, String, Int64, Int64).self) {
            backups.append(BackupSummary(createdAt: Date(timeIntervalSince1970: created), path: path, databaseBytes: bytes, fileCount: Int(files)))
        }
        return backups
    }
}
