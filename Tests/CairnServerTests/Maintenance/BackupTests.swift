import CairnProtocol
import CairnTesting
import Foundation
import NIOCore
import Testing

@testable import CairnServer

/// Backing up a data directory and restoring it, in the process: what a backup holds of files in each status, and
/// a data directory whose bytes are damaged.
@Suite("Backups of a data directory")
struct BackupTests {
    typealias F = StorageFixtures

    @Test("completed files are copied whole, an upload under way with the bytes it had, deleted files without any; the restore matches")
    func filesByStatus() async throws {
        let root = TestScratch.url("cairn-backup")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data"), backup = root.appendingPathComponent("backup")
        let restored = root.appendingPathComponent("restored")
        let opened = try ServerBackend.sqlite(dataDirectory: data).openNow()
        try await opened.storage.createProject(name: "field", now: F.epoch)
        let whole = TestFiles.bytes(3000, seed: 4), partial = TestFiles.bytes(700, seed: 5)
        try await Self.file("done", .completed, bytes: whole, sha256: TestFiles.sha256(whole), in: opened)
        try await Self.file("uploading", .new, size: 2000, bytes: partial, in: opened)
        try await Self.file("gone", .deleted, size: 10, bytes: nil, in: opened)
        try await opened.storage.close()

        let report = try await ServerBackup.run(dataDirectory: data, to: backup, clock: ManualWallClock(F.epoch + 60))
        #expect(report.backup.fileCount == 2)
        #expect(report.fileBytes == 3700)
        #expect(report.backup.createdAt == F.epoch + 60)
        #expect(report.backup.path == backup.path)
        let restore = try await ServerRestore.run(from: backup, into: restored)
        #expect(restore.backup == report.backup)
        #expect(restore.fileBytes == 3700)
        #expect(try Data(contentsOf: restored.appendingPathComponent("files/field/done")) == whole)
        #expect(try Data(contentsOf: restored.appendingPathComponent("files/field/uploading")) == partial)
        #expect(!FileManager.default.fileExists(atPath: restored.appendingPathComponent("files/field/gone").path))

        for directory in [data, restored] {
            let storage = try SQLiteStorage(path: directory.appendingPathComponent("cairn.sqlite").path)
            #expect(try await storage.backups(limit: 10) == [report.backup], "\(directory.lastPathComponent) lists the backup")
            #expect(try await storage.file(project: "field", id: "uploading")?.status == .new)
            try await storage.close()
        }
    }

    @Test("a completed file whose bytes are missing from the data directory fails the backup, which leaves nothing")
    func damagedDataDirectory() async throws {
        let root = TestScratch.url("cairn-backup")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data"), backup = root.appendingPathComponent("backup")
        let opened = try ServerBackend.sqlite(dataDirectory: data).openNow()
        try await opened.storage.createProject(name: "field", now: F.epoch)
        try await Self.file("lost", .completed, size: 10, bytes: nil, in: opened)
        try await opened.storage.close()
        await #expect(throws: ErrorBody.self) { try await ServerBackup.run(dataDirectory: data, to: backup) }
        #expect(!FileManager.default.fileExists(atPath: backup.path))
        let storage = try SQLiteStorage(path: data.appendingPathComponent("cairn.sqlite").path)
        #expect(try await storage.backups(limit: 10).isEmpty)
        try await storage.close()
    }

    /// A file row of `field` in `status`, with `bytes` in its blob when given.
    static func file(
        _ id: String, _ status: FileStatus, size: Int64? = nil, bytes: Data?, sha256: String? = nil, in opened: ServerBackend.Opened
    ) async throws {
        let file = StoredFile(
            project: "field", id: id, name: "\(id).bin", contentType: "application/octet-stream", size: size ?? Int64(bytes?.count ?? 0),
            sha256: sha256, status: status, tags: [], isPublic: false, createdAt: F.epoch, updatedAt: F.epoch, createdBy: "alice",
            attachTo: nil, attachedVersion: nil, expiresAt: nil)
        #expect(try await opened.storage.insertFile(file, projectBytesLimit: nil))
        guard let bytes else { return }
        try await opened.blobs.create(project: "field", id: id)
        _ = try await opened.blobs.write(
            project: "field", id: id, at: 0, limit: Int64(bytes.count), from: ServerMigration.once(ByteBuffer(bytes: bytes)))
    }
}
