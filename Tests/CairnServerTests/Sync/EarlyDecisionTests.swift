import CairnProtocol
import CairnTesting
import Foundation
import Synchronization
import Testing

@testable import CairnServer

/// A batch decides its operations before the project's write lock, from a snapshot, and re-checks under the lock what
/// it read: another batch that committed in between (run here from the `beforeLock` hook, so the order is certain)
/// makes it decide again, and only versions are handed out under the lock otherwise.
@Suite("Batches decided before the write lock", .timeLimit(.minutes(20)))
struct EarlyDecisionTests {
    static let schema = Schema(collections: [StorageFixtures.notes])
    static let lastWriterWins = Schema(collections: [CollectionSchema(
        name: "notes", fields: StorageFixtures.notes.fields, conflictPolicy: .lastWriterWins)])
    static let now = StorageFixtures.epoch

    static func operation(_ op: OperationKind, _ id: String, _ title: String?, opId: String, base: Int64? = nil) -> SyncOperation {
        SyncOperation(opId: opId, collection: "notes", id: id, op: op, baseVersion: base, data: title.map { ["title": .string($0)] })
    }

    /// Applies `batch` as alice; `meanwhile` runs after it decided and before it takes the lock.
    static func apply(
        _ batch: [SyncOperation], _ storage: any ServerStorage, schema: Schema = schema, meanwhile: (@Sendable () async throws -> Void)? = nil
    ) async throws -> BatchOutcome {
        var service = BatchService(storage: storage)
        service.beforeLock = meanwhile
        return try await service.apply(BatchRequest(operations: batch), project: "field", schema: schema, user: "alice", now: now)
    }

    static func versions(_ storage: any ServerStorage) async throws -> [Int64] {
        try await storage.feedRange(project: "field", collection: StorageFixtures.notes, since: 0, snapshotHigh: nil, limit: 100, filter: nil)
            .rows.map(\.version)
    }

    @Test("two batches decided against the same record: the one committing second decides again and conflicts", arguments: StorageBackend.all)
    func staleUpdateDecidesAgain(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            _ = try await Self.apply([Self.operation(.create, "a", "first", opId: "o1")], storage)
            let outcome = try await Self.apply([Self.operation(.update, "a", "mine", opId: "o2", base: 1)], storage) {
                // Decided as an update of version 1; bob's patch of version 1 commits first.
                let other = try await Self.apply([Self.operation(.patch, "a", "theirs", opId: "o3", base: 1)], storage)
                #expect(other.results.first?.status == .applied)
            }
            // Decided from the stored state alone, it would have overwritten version 2: the re-check saw version 2.
            #expect(outcome.results.first?.status == .conflict)
            #expect(outcome.results.first?.current?.version == 2)
            #expect(outcome.results.first?.current?.data["title"] == "theirs")
            #expect(try await Self.versions(storage) == [2])
            #expect(try await StorageFixtures.head(storage) == 2)
        }
    }

    @Test("under last-writer-wins the batch deciding again writes over the new state, numbered after it", arguments: StorageBackend.all)
    func lastWriterWinsDecidesAgain(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            _ = try await Self.apply([Self.operation(.create, "a", "first", opId: "o1")], storage, schema: Self.lastWriterWins)
            let outcome = try await Self.apply(
                [SyncOperation(opId: "o2", collection: "notes", id: "a", op: .patch, baseVersion: 1, data: ["done": true])], storage,
                schema: Self.lastWriterWins
            ) {
                _ = try await Self.apply([Self.operation(.patch, "a", "theirs", opId: "o3", base: 1)], storage, schema: Self.lastWriterWins)
            }
            // The patch merges into bob's state, not into the one it first read.
            #expect(outcome.results.first?.record?.version == 3)
            #expect(outcome.results.first?.record?.data == ["title": "theirs", "done": true])
            let fields = try await storage.fieldVersions(project: "field", collection: "notes", id: "a")
            #expect(fields?.version == 3)
            #expect(fields?.fields == ["title": 2, "done": 3])
        }
    }

    @Test("a create decided while the record did not exist conflicts with the create that committed first", arguments: StorageBackend.all)
    func concurrentCreates(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            let outcome = try await Self.apply([Self.operation(.create, "x", "mine", opId: "o1")], storage) {
                _ = try await Self.apply([Self.operation(.create, "x", "theirs", opId: "o2")], storage)
            }
            #expect(outcome.results.first?.status == .conflict)
            #expect(outcome.results.first?.current?.data["title"] == "theirs")
            #expect(try await StorageFixtures.head(storage) == 1)
        }
    }

    @Test("the same opId committed meanwhile is answered as a replay: applied once", arguments: StorageBackend.all)
    func sameOperationMeanwhile(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            let retry = Self.operation(.create, "y", "once", opId: "o1")
            let first = Mutex<[String]>([])
            let outcome = try await Self.apply([retry], storage) {
                let texts = try await Self.apply([retry], storage).resultTexts
                first.withLock { $0 = texts }
            }
            #expect(outcome.results.first?.status == .applied)
            #expect(outcome.resultTexts == first.withLock { $0 })
            #expect(try await Self.versions(storage) == [1])
            #expect(try await StorageFixtures.head(storage) == 1)
        }
    }

    @Test("others' writes to other records meanwhile: the decisions stand and take the next versions", arguments: StorageBackend.all)
    func decisionsStand(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            _ = try await Self.apply([Self.operation(.create, "a", "first", opId: "o1")], storage)
            let outcome = try await Self.apply(
                [Self.operation(.patch, "a", "second", opId: "o2", base: 1), Self.operation(.create, "b", "new", opId: "o3")], storage
            ) {
                _ = try await Self.apply([Self.operation(.create, "c", "other", opId: "o4"), Self.operation(.create, "d", "other", opId: "o5")], storage)
            }
            #expect(outcome.results.map(\.status) == [.applied, .applied])
            #expect(outcome.results.map { $0.record?.version } == [4, 5])
            #expect(outcome.resultTexts[1].contains("\"version\":5"))
            #expect(try await Self.versions(storage) == [2, 3, 4, 5])
            #expect(try await storage.fieldVersions(project: "field", collection: "notes", id: "a")?.fields == ["title": 4])
            // The replay of the batch answers what was committed.
            let replay = try await Self.apply([Self.operation(.create, "b", "new", opId: "o3")], storage)
            #expect(replay.resultTexts == [outcome.resultTexts[1]])
        }
    }

    @Test("a batch touching one record twice decides under the lock, each operation after the one before", arguments: StorageBackend.all)
    func chainDecidesUnderLock(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            #expect(!BatchLookups.touchesEachOnce([Self.operation(.create, "z", "a", opId: "o1"), Self.operation(.patch, "z", "b", opId: "o2")]))
            #expect(!BatchLookups.touchesEachOnce([Self.operation(.create, "z", "a", opId: "o1"), Self.operation(.create, "w", "b", opId: "o1")]))
            let outcome = try await Self.apply(
                [Self.operation(.create, "z", "a", opId: "o1"), Self.operation(.patch, "z", "b", opId: "o2", base: 1)], storage)
            #expect(outcome.results.map { $0.record?.version } == [1, 2])
            #expect(outcome.results.last?.record?.data["title"] == "b")
        }
    }
}
