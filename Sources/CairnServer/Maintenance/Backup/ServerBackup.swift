import CairnProtocol
import Foundation
import GRDB

/// Backs up a server's data directory while its server keeps serving: a consistent copy of the database through
/// SQLite's online backup (one read transaction, so one instant of the database: every write acknowledged before it
/// began is in it, none half), then the bytes of every file that copy knows, then `backup.json`; and records the
/// backup in the server's database, where `GET /v1/admin/backups` lists it.
///
/// A completed file never changes, so its bytes are copied after the database and checked against the size and
/// SHA-256 the copy records. One deleted meanwhile (its bytes gone) is marked deleted in the copy, as the server
/// had it a moment later. A `new` file (an upload under way) keeps the bytes it had when copied: its upload resumes
/// from them after a restore.
///
/// ```swift
/// let report = try await ServerBackup.run(dataDirectory: URL(fileURLWithPath: "cairn-data"), to: URL(fileURLWithPath: "backups/monday"))
/// print(report.backup.databaseBytes, report.backup.fileCount)
/// ```
public enum ServerBackup {
    /// What a backup wrote.
    public struct Report: Sendable, Hashable {
        /// The backup as the server lists it.
        public var backup: BackupSummary
        /// The files' bytes in all.
        public var fileBytes: Int64
        /// Completed files deleted while the backup ran: deleted in the copy too.
        public var deletedMeanwhile: Int
    }

    /// Backs up the server in `dataDirectory` (it must hold one) into `target`, a new or empty directory; on failure
    /// nothing is left in `target`.
    public static func run(dataDirectory: URL, to target: URL, clock: any WallClock = SystemWallClock()) async throws -> Report {
        let backend = ServerBackend.sqlite(dataDirectory: dataDirectory)
        try backend.checkExists()
        let directory = try BackupDirectory.prepare(target.standardizedFileURL, what: "the backup directory")
        let live = try SQLiteStorage(path: ServerBackend.databasePath(in: dataDirectory))
        do {
            let report = try await copy(
                from: live, files: DirectoryBlobStore(root: ServerBackend.filesDirectory(in: dataDirectory)), into: directory.url, clock: clock)
            try await live.recordBackup(report.backup)
            try await live.close()
            return report
        } catch {
            try? await live.close()
            directory.discard()
            throw error
        }
    }

    /// Copies the database, then the files it knows, then writes the manifest.
    static func copy(from live: SQLiteStorage, files: DirectoryBlobStore, into target: URL, clock: any WallClock) async throws -> Report {
        let createdAt = clock.now()
        let databaseURL = target.appendingPathComponent("cairn.sqlite")
        let copy = try DatabaseQueue(path: databaseURL.path)
        // All pages in one step, in one read transaction of the live database: one consistent instant, while its
        // writers go on (WAL). The copy then becomes one self-contained file.
        try live.pool.backup(to: copy)
        try await copy.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
            try BackupCheck.integrity(db, pragma: "quick_check", of: databaseURL.path)
        }
        let stored = try await copy.read(BackupCheck.StoredBytes.all)
        let copies = DirectoryBlobStore(root: ServerBackend.filesDirectory(in: target))
        var fileCount = 0
        var fileBytes: Int64 = 0
        var deleted: [BackupCheck.StoredBytes] = []
        for file in stored {
            do {
                let copied = try await files.copy(project: file.project, id: file.id, length: file.isCompleted ? file.size : nil, to: copies)
                if file.isCompleted, let sha256 = file.sha256, copied.sha256 != sha256 {
                    throw ErrorBody(
                        code: .checksumMismatch, message: "file \(file.project)/\(file.id) does not match its SHA-256: the data directory is damaged")
                }
                fileCount += 1
                fileBytes += copied.bytes
            } catch {
                // Bytes gone, or changed under the copy: fine when the file was deleted (or, for an upload, expired or
                // completed) since the copy of the database; anything else is damage.
                try? FileManager.default.removeItem(atPath: copies.path(file.project, file.id).string)
                let now = try await live.file(project: file.project, id: file.id)
                guard file.isCompleted ? now?.status == .deleted : now?.status != .new else { throw error }
                if file.isCompleted { deleted.append(file) }
            }
        }
        let deletedMeanwhile = deleted
        try await copy.write { db in
            for file in deletedMeanwhile {
                try db.execute(
                    sql: "UPDATE files SET status = 'deleted', updated_at = ? WHERE project = ? AND id = ?",
                    arguments: [clock.now().epochSeconds, file.project, file.id])
            }
        }
        try copy.close()
        try BackupCheck.synchronize(databaseURL)
        let databaseBytes = try BackupCheck.size(of: databaseURL)
        try BackupManifest(
            format: BackupManifest.currentFormat, createdAt: createdAt, databaseBytes: databaseBytes, fileCount: fileCount, fileBytes: fileBytes
        ).write(into: target)
        return Report(
            backup: BackupSummary(createdAt: createdAt, path: target.path, databaseBytes: databaseBytes, fileCount: fileCount),
            fileBytes: fileBytes, deletedMeanwhile: deleted.count)
    }
}
