import CairnProtocol
import Foundation
import GRDB

/// Brings a backup made by ``ServerBackup`` into a new data directory, checked: SQLite's `integrity_check` on the
/// database, and every file the database holds as completed present with its size and SHA-256. The new directory
/// then serves as the server did at the backup's instant: the same versions, cursors, tokens and clients, so apps
/// synced before the backup go on from their cursors. It also records the backup it came from, so its operators
/// see when their last backup was made.
///
/// ```swift
/// let report = try await ServerRestore.run(from: URL(fileURLWithPath: "backups/monday"), into: URL(fileURLWithPath: "cairn-data-2"))
/// ```
public enum ServerRestore {
    /// What a restore brought back.
    public struct Report: Sendable, Hashable {
        /// The backup restored.
        public var backup: BackupSummary
        /// The files' bytes in all.
        public var fileBytes: Int64
    }

    /// Restores the backup in `backup` into `dataDirectory`, a new or empty directory; on failure nothing is left in
    /// `dataDirectory`.
    public static func run(from backup: URL, into dataDirectory: URL) async throws -> Report {
        let backup = backup.standardizedFileURL
        let directory = try BackupDirectory.prepare(dataDirectory, what: "the data directory")
        do {
            let manifest = try BackupManifest.read(from: backup)
            let fileBytes = try await restore(backup, manifest: manifest, into: dataDirectory)
            let summary = BackupSummary(
                createdAt: manifest.createdAt, path: backup.path, databaseBytes: manifest.databaseBytes, fileCount: manifest.fileCount)
            // Opening migrates a backup of an older server forward.
            let storage = try SQLiteStorage(path: ServerBackend.databasePath(in: dataDirectory))
            do {
                try await storage.recordBackup(summary)
                try await storage.close()
            } catch {
                try? await storage.close()
                throw error
            }
            return Report(backup: summary, fileBytes: fileBytes)
        } catch {
            directory.discard()
            throw error
        }
    }

    /// Copies and checks the database, then copies and checks the files; returns the files' bytes.
    static func restore(_ backup: URL, manifest: BackupManifest, into dataDirectory: URL) async throws -> Int64 {
        let source = backup.appendingPathComponent("cairn.sqlite")
        let database = URL(fileURLWithPath: ServerBackend.databasePath(in: dataDirectory))
        guard FileManager.default.fileExists(atPath: source.path) else {
            throw ErrorBody(code: .notFound, message: "the backup \(backup.path) has no cairn.sqlite")
        }
        try FileManager.default.copyItem(at: source, to: database)
        try BackupCheck.synchronize(database)
        let queue = try DatabaseQueue(path: database.path)
        let stored = try await queue.read { db in
            try BackupCheck.integrity(db, pragma: "integrity_check", of: source.path)
            return try BackupCheck.StoredBytes.all(db)
        }
        try queue.close()
        let files = DirectoryBlobStore(root: ServerBackend.filesDirectory(in: backup))
        let restored = DirectoryBlobStore(root: ServerBackend.filesDirectory(in: dataDirectory))
        var count = 0
        var bytes: Int64 = 0
        for file in stored {
            let copied: DirectoryBlobStore.Copied
            do {
                copied = try await files.copy(project: file.project, id: file.id, length: file.isCompleted ? file.size : nil, to: restored)
            } catch let error as ErrorBody where error.code == .notFound && !file.isCompleted {
                // An upload that had no bytes yet: it starts from the first byte.
                continue
            }
            if file.isCompleted {
                guard copied.bytes == file.size, file.sha256.map({ $0 == copied.sha256 }) ?? true else {
                    throw ErrorBody(code: .checksumMismatch, message: "file \(file.project)/\(file.id) in \(backup.path) does not match its SHA-256")
                }
            }
            count += 1
            bytes += copied.bytes
        }
        guard count == manifest.fileCount else {
            throw ErrorBody(
                code: .notFound, message: "the backup \(backup.path) holds \(count) files of the \(manifest.fileCount) it was made with")
        }
        return bytes
    }
}
