import CairnProtocol
import CairnTesting
import Foundation
import NIOCore
import Testing

@testable import CairnServer

/// Copying a server between backends through the storage protocol: the table list covers every backend's schema,
/// and rows and bytes go both ways.
@Suite("Storage conformance: copying a server between backends")
struct StorageCopyTests {
    typealias F = StorageFixtures

    @Test("StorageTable.all names every table of the backend's schema, with its columns in order", arguments: StorageBackend.all)
    func tablesCoverTheSchema(backend: StorageBackend) async throws {
        try await backend.withStorage { storage in
            let schema = try await backend.schema(storage)
            let copied = Dictionary(uniqueKeysWithValues: StorageTable.all.map { ($0.name, $0.columns.map(\.name)) })
            #expect(Set(schema.keys).subtracting(backend.tablesNotCopied) == Set(copied.keys),
                    "a table of the schema is neither in StorageTable.all nor named as not copied")
            for (table, columns) in copied { #expect(schema[table] == columns, "the columns of \(table)") }
        }
    }

    @Test("a table reads back in pages in key order, and an import written twice changes nothing", arguments: StorageBackend.all)
    func pages(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            for name in ["c", "a", "d", "b", "e"] { try await storage.createUser(name: name, passwordHash: "h-\(name)") }
            var names: [String] = []
            var after: StorageRow?
            repeat {
                let rows = try await storage.exportRows(of: .users, after: after, limit: 2)
                #expect(rows.count <= 2)
                names += rows.compactMap { if case .text(let name) = $0[0] { name } else { nil } }
                after = rows.last.map(StorageTable.users.key(of:))
            } while after != nil
            #expect(names == ["a", "b", "c", "d", "e"])
            let rows = try await storage.exportRows(of: .users, after: nil, limit: 100)
            try await storage.importRows(rows, into: .users)
            try await storage.importRows([], into: .users)
            #expect(try await storage.exportRows(of: .users, after: nil, limit: 100) == rows)
        }
    }

    @Test("a server with a row in every table and a file's bytes copies from SQLite to PostgreSQL and back")
    func bothWays() async throws {
        guard StorageBackend.all.count > 1 else { return }
        try await StorageBackend.sqlite.withBlobs { sqlite, sqliteBlobs in
            try await Self.seed(sqlite, blobs: sqliteBlobs)
            try await StorageBackend.postgres.withBlobs { postgres, postgresBlobs in
                try await StorageBackend.sqlite.withBlobs { back, backBlobs in
                    let first = try await ServerMigration.copy(
                        from: .init(storage: sqlite, blobs: sqliteBlobs), to: .init(storage: postgres, blobs: postgresBlobs)) { _ in }
                    #expect(first.files == 1)
                    #expect(first.bytes == 2500)
                    #expect(StorageTable.all.allSatisfy { (first.rows[$0.name] ?? 0) > 0 }, "\(first.rows)")
                    let second = try await ServerMigration.copy(
                        from: .init(storage: postgres, blobs: postgresBlobs), to: .init(storage: back, blobs: backBlobs)) { _ in }
                    #expect(second.rows == first.rows)
                    for table in StorageTable.all {
                        let original = try await Self.rows(of: table, in: sqlite)
                        #expect(try await Self.rows(of: table, in: postgres) == original, "\(table) in PostgreSQL")
                        #expect(try await Self.rows(of: table, in: back) == original, "\(table) back in SQLite")
                    }
                    var bytes = ByteBuffer()
                    try await backBlobs.read(project: "field", id: "f-1", range: 0..<2500) { (chunk: ByteBuffer) in
                        bytes.writeImmutableBuffer(chunk)
                    }
                    #expect(Data(bytes.readableBytesView) == TestFiles.bytes(2500, seed: 1))
                }
            }
        }
    }

    /// Every row of `table`, as a set: backends order text keys by their own collations.
    static func rows(of table: StorageTable, in storage: any ServerStorage) async throws -> Set<StorageRow> {
        Set(try await storage.exportRows(of: table, after: nil, limit: 10_000))
    }

    /// A row in every table of ``StorageTable/all``, and the bytes of a completed file.
    static func seed(_ storage: any ServerStorage, blobs: any BlobStore) async throws {
        try await storage.createProject(name: "field", now: F.epoch)
        try await storage.createUser(name: "alice", passwordHash: "h")
        try await storage.grant(user: "alice", project: "field", role: .writer)
        try await storage.setOperator(user: "alice", true)
        try await storage.revokeSignIns(user: "alice", now: F.epoch + 0.5)
        try await storage.insertToken(StoredToken(hash: "t", kind: .refresh, user: "alice", family: "f", expiresAt: F.epoch + 86_400))
        try await F.commit([F.row("n1", 1, #"{"title":"é \u{1F600}"}"#, fields: ["title": 1]), F.row("n2", 2, deleted: true)], in: storage)
        try await F.commit([F.row("n3", 3, deleted: true)], at: F.epoch + 7200, in: storage)
        try await storage.withProjectWriteTransaction(project: "field") { transaction in
            try await transaction.rememberOperation(RememberedOperation(opId: "o1", fingerprint: "f", result: #"{"status":"applied"}"#), at: F.epoch + 0.25)
            return .commit(())
        }
        _ = try await storage.purge(tombstonesBefore: F.epoch + 3600, operationsBefore: F.epoch, now: F.epoch)
        let client = try await storage.registerClient(project: "field", user: "alice", device: "iPad", app: nil, now: F.epoch)
        try await storage.notePull(clientID: client, project: "field", version: 3, now: F.epoch + 10)
        #expect(try await storage.storeDiagnostics(clientID: client, project: "field", report: #"{"verdict":"up-to-date"}"#, now: F.epoch + 11))
        var file = StoredFile(
            project: "field", id: "f-1", name: "scan.pdf", contentType: "application/pdf", size: 2500, sha256: nil, status: .completed,
            tags: ["site"], isPublic: true, createdAt: F.epoch, updatedAt: F.epoch, createdBy: "alice", attachTo: nil, attachedVersion: 1,
            expiresAt: nil)
        #expect(try await storage.insertFile(file, projectBytesLimit: nil))
        file.id = "f-2"
        file.status = .deleted
        #expect(try await storage.insertFile(file, projectBytesLimit: nil))
        try await storage.setFileLimits(project: "field", limits: FileLimits(maximumFileBytes: 1000, maximumProjectBytes: nil))
        try await storage.setClaims(user: "alice", project: "field", claims: ["regions": ["north"]])
        try await storage.rememberReadScope(fingerprint: "00112233445566778899aabbccddeeff", filterText: #"{"or":[]}"#)
        #expect(try await storage.secret(named: "cursor-key") { "k" } == "k")
        // A record changed twice: its first state is kept in the history.
        try await F.commit([F.row("n4", 4, #"{"title":"first"}"#)], at: F.epoch + 20, in: storage)
        try await F.commit([F.row("n4", 5, #"{"title":"second"}"#)], at: F.epoch + 30, in: storage)
        try await storage.recordBackup(BackupSummary(createdAt: F.epoch + 40.25, path: "/backups/é", databaseBytes: 4096, fileCount: 1))
        try await storage.createServiceKey(StoredServiceKey(project: "field", name: "erp", role: .writer, keyHash: "abc", createdAt: F.epoch + 41))
        try await storage.noteServiceKeyUsed(hash: "abc", now: F.epoch + 42)
        try await storage.createWebhook(StoredWebhook(
            project: "field", name: "erp", url: "https://erp.example/hook", collections: ["notes"], secret: "0123456789abcdef", createdAt: F.epoch + 43))
        #expect(try await storage.leaseWebhook(project: "field", name: "erp", owner: "one", until: F.epoch + 100, now: F.epoch + 44) != nil)
        #expect(try await storage.recordAttempt(project: "field", name: "erp", owner: "one", .failed(error: "refused", at: F.epoch + 45, retryAt: F.epoch + 46)))
        _ = try await storage.recordActionCall(StoredActionCall(
            project: "field", idempotencyKey: "k-1", action: "closeJob", caller: "alice", status: 200, answer: #"{"ok":true}"#,
            completedAt: F.epoch + 47))
        try await blobs.create(project: "field", id: "f-1")
        _ = try await blobs.write(
            project: "field", id: "f-1", at: 0, limit: 2500, from: ServerMigration.once(ByteBuffer(bytes: TestFiles.bytes(2500, seed: 1))))
    }
}
