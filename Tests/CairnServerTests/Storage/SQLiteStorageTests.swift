import CairnProtocol
import CairnTesting
import Foundation
import GRDB
import Testing

@testable import CairnServer

/// What only the SQLite backend promises: its column formats and its diagnostics.
@Suite("SQLite storage specifics")
struct SQLiteStorageTests {
    @Test("field versions are stored as canonical JSON, and read back")
    func fieldVersionsColumn() throws {
        for versions: [String: Int64] in [[:], ["b": 2, "a": 10, "é\"x": 3, "A": Int64.max]] {
            let text = FieldVersionsColumn.encode(versions)
            #expect(text == JSONValue.object(versions.mapValues { .integer($0) }).jsonText())
            #expect(try FieldVersionsColumn.decode(text) == versions)
        }
    }

    @Test("diagnostics count applied operations and tell an operation's status")
    func diagnostics() async throws {
        try await StorageBackend.sqlite.withProjects { storage in
            let schema = Schema(collections: [StorageFixtures.notes])
            let outcome = try await BatchService(storage: storage).apply(
                BatchRequest(operations: [
                    SyncOperation(opId: "o1", collection: "notes", id: "a", op: .create, data: ["title": "x"]),
                    SyncOperation(opId: "o2", collection: "notes", id: "a", op: .create, data: ["title": "y"]),
                ]), project: "field", schema: schema, user: "alice", now: StorageFixtures.epoch)
            #expect(outcome.results.map(\.status) == [.applied, .conflict])
            #expect(try await storage.operationCounts(project: "field") == (head: 1, applied: 1))
            #expect(try await storage.operationStatus(project: "field", opId: "o2") == .conflict)
            #expect(try await storage.operationStatus(project: "field", opId: "o3") == nil)
        }
    }

    @Test("the writer commits with synchronous = FULL: an acknowledged write survives a power cut")
    func fullSync() async throws {
        try await StorageBackend.sqlite.withStorage { storage in
            let sqlite = try #require(storage as? SQLiteStorage)
            // 2 is FULL (NORMAL is 1, what the pool sets when it enables WAL).
            #expect(try sqlite.pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
        }
    }

    @Test("durability .normal (cairn serve --durability normal) commits with synchronous = NORMAL")
    func normalSync() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-durability-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sqlite = try SQLiteStorage(path: directory.appendingPathComponent("cairn.sqlite").path, durability: .normal)
        #expect(try sqlite.pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 1)
    }

    @Test("remembered operations are purged from the oldest row up: a row out of age order keeps what follows it")
    func operationsPurgeInRowOrder() async throws {
        try await StorageBackend.sqlite.withStorage { storage in
            let sqlite = try #require(storage as? SQLiteStorage)
            // Ages in row order: two old, one recent (a clock set back?), one old again.
            let ages: [Double] = [10, 20, 1000, 30]
            try await sqlite.pool.write { db in
                for (index, age) in ages.enumerated() {
                    try db.execute(
                        sql: "INSERT INTO operations (project, op_id, fingerprint, result, created_at) VALUES ('p', ?, 'f', '{}', ?)",
                        arguments: ["op-\(index)", age])
                }
            }
            let report = try await storage.purge(
                tombstonesBefore: Date(timeIntervalSince1970: 0), operationsBefore: Date(timeIntervalSince1970: 100), now: Date(timeIntervalSince1970: 0))
            #expect(report.operations == 2)
            let left = try await sqlite.pool.read { db in try String.fetchAll(db, sql: "SELECT op_id FROM operations ORDER BY rowid") }
            #expect(left == ["op-2", "op-3"])
            // Once every row has aged, all go.
            let later = try await storage.purge(
                tombstonesBefore: Date(timeIntervalSince1970: 0), operationsBefore: Date(timeIntervalSince1970: 2000), now: Date(timeIntervalSince1970: 0))
            #expect(later.operations == 2)
        }
    }
}
