import CairnProtocol
import Foundation
import Testing

@testable import Cairn

@Suite("Store: push bookkeeping")
struct StorePushTests {
    @Test("a batch takes the oldest ready change of each record, counts an attempt, and a retry sends the same operations")
    func batchesMarkAttempts() throws {
        let test = try TestStore()
        for index in 1...3 { try test.store.write(collection: "notes", id: "n-\(index)", change: .create(["count": .integer(Int64(index))])) }
        let first = try test.store.uploads.takeBatch(limit: 2)
        #expect(first.map(\.recordID) == ["n-1", "n-2"])
        #expect(first.map(\.attempts) == [1, 1])
        // The next batch starts after the newest in flight.
        let second = try test.store.uploads.takeBatch(limit: 10, after: first.last!.sequence)
        #expect(second.map(\.recordID) == ["n-3"])
        // The answer was lost: the same operations go again, never changed by later writes.
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["title": "later"]))
        let retry = try test.store.uploads.takeBatch(limit: 2)
        #expect(retry.map(\.opId) == first.map(\.opId))
        #expect(retry.map(\.attempts) == [2, 2])
        #expect(retry[0].data == ["count": 1])
        #expect(try test.queued().filter { $0.recordID == "n-1" }.map(\.kind) == [.create, .patch])
    }

    @Test("an applied create leaves the queue; the row shows the committed version and no pending change")
    func appliedCreate() throws {
        let test = try TestStore()
        try test.store.write(collection: "notes", id: "n-1", change: .create(["title": "x"]))
        let conflicts = try test.push { TestStore.applied($0, version: 1) }
        #expect(conflicts.isEmpty)
        #expect(try test.queued().isEmpty)
        #expect(try test.shadow("n-1") == nil)
        let record = try #require(try test.record("n-1"))
        #expect(record.version == 1)
        #expect(record.hasPendingChanges == false)
        #expect(record.updatedBy == "alice")
        #expect(record.updatedAt == Date(timeIntervalSince1970: 1_900_000_000))
        let counts = try test.store.uploads.counts()
        #expect(counts.pending == 0)
        #expect(counts.failed == 0)
    }

    @Test("an applied patch shows the data the server committed, which may hold other changes")
    func appliedPatchShowsServerData() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"])])
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 2]))
        try test.push { TestStore.applied($0, version: 3, data: ["title": "changed elsewhere", "count": 2]) }
        let record = try #require(try test.record("n-1"))
        #expect(record.data == ["title": "changed elsewhere", "count": 2])
        #expect(record.version == 3)
        #expect(record.hasPendingChanges == false)
        #expect(try test.shadow("n-1") == nil)
    }

    @Test("an applied delete removes the row and forgets the record")
    func appliedDelete() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"])])
        try test.store.write(collection: "notes", id: "n-1", change: .delete)
        try test.push { TestStore.applied($0, version: 2) }
        #expect(try test.record("n-1") == nil)
        #expect(try test.queued().isEmpty)
        #expect(try test.shadow("n-1") == nil)
    }

    @Test("a rejected change moves to the failed list, the change queued on top builds on its base, and the row keeps both")
    func rejectedChange() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 5, data: ["title": "A"])])
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["title": "B"]))
        let batch = try test.store.uploads.takeBatch(limit: 10)
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 1]))
        _ = try test.store.uploads.recordAnswers([TestStore.rejected(batch[0])], for: batch)

        let failed = try test.store.uploads.failedOperations()
        #expect(failed.map(\.opId) == [batch[0].opId])
        #expect(failed[0].error.code == .validationFailed)
        #expect(failed[0].data == ["title": "B"])
        #expect(failed[0].failedAt == test.clock.now())
        let queued = try test.queued()
        #expect(queued.count == 1)
        #expect(queued[0].waitsFor == nil)
        #expect(queued[0].baseVersion == 5)
        #expect(try test.record("n-1")?.data == ["title": "B", "count": 1])
        let counts = try test.store.uploads.counts()
        #expect(counts.pending == 1)
        #expect(counts.failed == 1)
    }

    @Test("a failed change is retried under a new opId after the queued ones, or discarded to show the server state")
    func retryAndDiscardFailed() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 5, data: ["title": "A"])])
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["title": "B"]))
        try test.push { TestStore.rejected($0) }
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 1]))
        let pending = try test.queued()
        let failed = try #require(try test.store.uploads.failedOperations().first)

        try test.store.uploads.retryFailed(id: failed.id, data: ["title": "C"])
        let queued = try test.queued()
        #expect(queued.count == 2)
        #expect(queued[1].opId != failed.opId)
        #expect(queued[1].kind == .patch)
        #expect(queued[1].data == ["title": "C"])
        #expect(queued[1].waitsFor == pending[0].opId)
        #expect(queued[1].baseVersion == nil)
        #expect(try test.store.uploads.failedOperations().isEmpty)
        #expect(try test.record("n-1")?.data == ["title": "C", "count": 1])

        // Uploaded and rejected again, then discarded: the record shows the server state with what remains.
        try test.store.uploads.cancel(opId: queued[0].opId)
        try test.push { TestStore.rejected($0) }
        let again = try #require(try test.store.uploads.failedOperations().first)
        try test.store.uploads.discardFailed(id: again.id)
        #expect(try test.store.uploads.failedOperations().isEmpty)
        let record = try #require(try test.record("n-1"))
        #expect(record.data == ["title": "A"])
        #expect(record.hasPendingChanges == false)
        #expect(try test.shadow("n-1") == nil)
        expectError(.notFound) { try test.store.uploads.discardFailed(id: again.id) }
    }

    @Test("cancelling a change hands its wait (or its base) to the change queued on top of it")
    func cancelHandsOnItsWait() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 2, data: ["title": "A"])])
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["title": "B"]))
        let first = try test.store.uploads.takeBatch(limit: 10)[0]
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 1]))
        let second = try test.store.uploads.takeBatch(limit: 10, after: first.sequence)
        #expect(second.isEmpty)
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 2]))
        var queued = try test.queued()
        #expect(queued.count == 2)

        // The second change waits for the first; cancelling the first lets it build on the base.
        try test.store.uploads.cancel(opId: first.opId)
        queued = try test.queued()
        #expect(queued.count == 1)
        #expect(queued[0].waitsFor == nil)
        #expect(queued[0].baseVersion == 2)
        #expect(try test.record("n-1")?.data == ["title": "A", "count": 2])
        expectError(.notFound) { try test.store.uploads.cancel(opId: first.opId) }
    }

    @Test("a conflict keeps the change queued; its resolution replaces the queue on top of the server's version")
    func conflictResolution() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A", "count": 1])])
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["title": "local"]))
        let server = ServerRecord(id: "n-1", version: 4, data: ["title": "A", "count": 9])
        let conflicts = try test.push { TestStore.conflict($0, current: server) }
        #expect(conflicts.count == 1)
        #expect(try test.queued().count == 1)

        let (operation, current) = conflicts[0]
        let conflict = try test.store.uploads.conflict(for: operation, current: current)
        #expect(conflict.base == ["title": "A", "count": 1])
        #expect(conflict.local == ["title": "local", "count": 1])
        #expect(conflict.server == ["title": "A", "count": 9])
        let resolution = ConflictResolver.threeWayMerge(conflict, fallback: .server)
        #expect(resolution == .data(["title": "local", "count": 9]))
        try test.store.uploads.resolve(conflict, resolution: resolution, current: current)

        let queued = try test.queued()
        #expect(queued.count == 1)
        #expect(queued[0].opId != operation.opId)
        #expect(queued[0].kind == .update)
        #expect(queued[0].baseVersion == 4)
        #expect(queued[0].data == ["title": "local", "count": 9])
        let record = try #require(try test.record("n-1"))
        #expect(record.data == ["title": "local", "count": 9])
        #expect(record.version == 4)
        #expect(record.hasPendingChanges)
        let logged = try test.store.uploads.conflicts(limit: 10)
        #expect(logged.map(\.resolution) == [.merged])
        #expect(logged[0].resolved == ["title": "local", "count": 9])
    }

    @Test("a conflict resolved for the server drops the local change and shows the server state")
    func conflictServerWins() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"])])
        try test.store.write(collection: "notes", id: "n-1", change: .delete)
        let server = ServerRecord(id: "n-1", version: 2, data: ["title": "B"])
        let (operation, current) = try #require(try test.push { TestStore.conflict($0, current: server) }.first)
        try test.store.uploads.resolve(try test.store.uploads.conflict(for: operation, current: current), resolution: .server, current: current)
        #expect(try test.queued().isEmpty)
        let record = try #require(try test.record("n-1"))
        #expect(record.data == ["title": "B"])
        #expect(record.version == 2)
        #expect(record.hasPendingChanges == false)
        #expect(try test.shadow("n-1") == nil)
    }
}
