import CairnProtocol
@testable import CairnServer
import CairnTesting
import Foundation
import GRDB
import PostgresNIO
import Testing

/// A storage backend the conformance suite runs against: each test gets a fresh, empty storage.
struct StorageBackend: Sendable, CustomTestStringConvertible {
    let name: String
    /// The tables of its schema that ``StorageTable/all`` leaves out on purpose.
    let tablesNotCopied: Set<String>
    let open: @Sendable (URL) async throws -> any ServerStorage
    let close: @Sendable (any ServerStorage) async -> Void
    /// The backend's blob store over an open storage, with small chunks where it has chunks (so that tests cross them).
    let blobs: @Sendable (any ServerStorage, URL) -> any BlobStore
    /// The tables of an open storage's database and their columns, in order, as the database itself lists them.
    let schema: @Sendable (any ServerStorage) async throws -> [String: [String]]

    /// Every backend; a new one is added here and must pass the whole suite. PostgreSQL runs on a throwaway cluster
    /// when this machine has its binaries, and is left out with a printed reason otherwise.
    static let all: [StorageBackend] = {
        guard PostgresCluster.isAvailable(for: "the PostgreSQL backend's runs") else { return [.sqlite] }
        return [.sqlite, .postgres]
    }()

    /// The embedded SQLite database.
    static let sqlite = StorageBackend(name: "SQLite", tablesNotCopied: Set(SQLiteStorage.tablesNotCopied.keys)) { directory in
        try SQLiteStorage(path: directory.appendingPathComponent("cairn.sqlite").path)
    } close: { storage in
        try? await (storage as? SQLiteStorage)?.close()
    } blobs: { _, directory in
        DirectoryBlobStore(root: directory.appendingPathComponent("files"))
    } schema: { storage in
        try await (storage as! SQLiteStorage).pool.read { db in
            var tables: [String: [String]] = [:]
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") {
                tables[table] = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?) ORDER BY cid", arguments: [table])
            }
            return tables
        }
    }

    /// A new database on the test process's PostgreSQL cluster.
    static let postgres = StorageBackend(name: "PostgreSQL", tablesNotCopied: Set(PostgresStorage.tablesNotCopied.keys)) { _ in
        // The pool's timeouts never fire here: on a busy machine a connection may take more than their 10 s to come.
        try await PostgresStorage(url: try PostgresCluster.shared().makeDatabase(), timers: ManualClock())
    } close: { storage in
        await (storage as? PostgresStorage)?.close()
    } blobs: { storage, _ in
        PostgresBlobStore(storage: storage as! PostgresStorage, chunkSize: 1000)
    } schema: { storage in
        let rows = try await (storage as! PostgresStorage).client.client.query(
            "SELECT table_name::text, column_name::text FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position")
        var tables: [String: [String]] = [:]
        for try await (table, column) in rows.decode((String, String).self) { tables[table, default: []].append(column) }
        return tables
    }

    var testDescription: String { name }

    /// Runs `body` with a new storage and its blob store in a temporary directory, removed afterwards.
    func withBlobs<T>(_ body: (any ServerStorage, any BlobStore) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-storage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = try await open(directory)
        do {
            let result = try await body(storage, blobs(storage, directory))
            await close(storage)
            return result
        } catch {
            await close(storage)
            throw error
        }
    }

    /// Runs `body` with a new storage in a temporary directory, removed afterwards.
    func withStorage<T>(_ body: (any ServerStorage) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-storage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = try await open(directory)
        do {
            let result = try await body(storage)
            await close(storage)
            return result
        } catch {
            await close(storage)
            throw error
        }
    }

    /// Runs `body` with a new storage holding the projects `field` and `other`.
    func withProjects<T>(_ body: (any ServerStorage) async throws -> T) async throws -> T {
        try await withStorage { storage in
            try await storage.createProject(name: "field", now: StorageFixtures.epoch)
            try await storage.createProject(name: "other", now: StorageFixtures.epoch)
            return try await body(storage)
        }
    }
}

/// Rows and helpers the conformance tests share.
enum StorageFixtures {
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)

    /// The code of the ``ErrorBody`` `body` throws, `unexpected` for another error, nil when it throws nothing.
    static func errorCode(_ body: () async throws -> Void) async -> ErrorCode? {
        do {
            try await body()
            return nil
        } catch let error as ErrorBody {
            return error.code
        } catch {
            return ErrorCode("unexpected")
        }
    }

    static let notes = CollectionSchema(
        name: "notes", fields: [FieldSchema(name: "title", type: .string), FieldSchema(name: "done", type: .boolean)])

    /// A row at `version` with `data` (a tombstone when `deleted`).
    static func row(_ id: String, _ version: Int64, _ data: String = "{}", deleted: Bool = false, fields: [String: Int64] = [:]) -> RecordRow {
        RecordRow(
            id: id, version: version, updatedAt: "2027-01-15T08:00:00Z", updatedBy: "alice", deleted: deleted, dataText: data,
            fieldVersions: fields)
    }

    /// Writes `rows` of `collection` and moves the head to the highest version, in one transaction.
    static func commit(_ rows: [RecordRow], collection: String = "notes", project: String = "field", at time: Date = epoch,
                       in storage: any ServerStorage) async throws {
        try await storage.withProjectWriteTransaction(project: project) { transaction in
            for row in rows { try await transaction.writeRecord(row, collection: collection, changedAt: time) }
            if let high = rows.map(\.version).max() { try await transaction.setHeadVersion(high) }
            return .commit(())
        }
    }

    /// The head version, read in a transaction that writes nothing.
    static func head(_ storage: any ServerStorage, project: String = "field") async throws -> Int64 {
        try await storage.withProjectWriteTransaction(project: project) { .commit(try await $0.headVersion()) }
    }
}
