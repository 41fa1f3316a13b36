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

    @Test("a cursor from before the backup continues on the restored server; one from after it is cursor_expired")
    func cursors() async throws {
        let root = TestScratch.url("cairn-backup")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data"), backup = root.appendingPathComponent("backup")
        let restored = root.appendingPathComponent("restored")
        let (before, after) = try await Self.serving(data) { _, http, token in
            _ = try await Self.push(["n1", "n2"], http, token)
            let before = try await Self.pull(since: nil, http, token)
            _ = try await Self.push(["n3"], http, token)
            _ = try await ServerBackup.run(dataDirectory: data, to: backup)
            _ = try await Self.push(["n4"], http, token)
            return (before.cursor, try await Self.pull(since: before.cursor, http, token).cursor)
        }
        _ = try await ServerRestore.run(from: backup, into: restored)
        try await Self.serving(restored) { _, http, token in
            let reply = try await http.send(.GET, Self.changes(since: before), token: token)
            #expect(try reply.decode(ChangesPage.self).changes.map(\.id) == ["n3"])
            let ahead = try await http.send(.GET, Self.changes(since: after), token: token)
            #expect(ahead.status == 410)
            #expect(ahead.errorCode == "cursor_expired")
        }
    }

    /// Runs `body` against a server on `directory` with the project `field`, signed in as alice (a writer).
    static func serving<T>(_ directory: URL, _ body: (EmbeddedServer, TestHTTPClient, String) async throws -> T) async throws -> T {
        let server = try await EmbeddedServer.start(dataDirectory: directory) { $0.bcryptCost = 4 }
        do {
            try await server.setUp(project: "field", schema: Fixture.schema)
            try await server.addUser("alice", password: TestServer.password, role: .writer, project: "field")
            let http = TestHTTPClient(baseURL: server.baseURL)
            let result = try await body(server, http, try await http.login("alice").accessToken)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    static func push(_ ids: [String], _ http: TestHTTPClient, _ token: String) async throws -> HTTPReply {
        let operations = ids.map { SyncOperation(opId: newOpID(), collection: "notes", id: $0, op: .create, data: ["title": .string($0)]) }
        let reply = try await http.send(.POST, "/v1/projects/field/batch", token: token, value: BatchRequest(operations: operations))
        #expect(reply.status == 200)
        return reply
    }

    static func pull(since: String?, _ http: TestHTTPClient, _ token: String) async throws -> ChangesPage {
        try await http.send(.GET, changes(since: since), token: token).decode(ChangesPage.self)
    }

    static func changes(since: String?) -> String {
        "/v1/projects/field/collections/notes/changes" + (since.map { "?since=" + Fixture.encode($0) } ?? "")
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
