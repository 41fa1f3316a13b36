import CairnProtocol
import Testing

@testable import Cairn

@Suite("Store: local writes queue their uploads")
struct StoreWriteTests {
    @Test("a create shows at once, pending, and queues a create with no base version")
    func createQueuesCreate() throws {
        let test = try TestStore()
        let record = try test.store.write(collection: "notes", id: "n-1", change: .create(["title": "Exits", "count": 1, "gone": nil]))
        #expect(record?.data == ["title": "Exits", "count": 1])
        #expect(record?.hasPendingChanges == true)
        #expect(record?.version == 0)
        let queued = try test.queued()
        #expect(queued.map(\.kind) == [.create])
        #expect(queued[0].baseVersion == nil)
        #expect(queued[0].waitsFor == nil)
        #expect(queued[0].data == ["title": "Exits", "count": 1])
        #expect(queued[0].createdAt == test.clock.now())
        // Its typed column is filled too.
        #expect(try test.store.rows(sql: "SELECT title, count FROM notes", arguments: []) == [["title": "Exits", "count": 1]])
    }

    @Test("a write on a pulled record builds on its version, and the shadow keeps the server state")
    func updateBuildsOnPulledVersion() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 7, data: ["title": "Server"])])
        try test.store.write(collection: "notes", id: "n-1", change: .save(["title": "Local"]))
        let queued = try test.queued()
        #expect(queued.map(\.kind) == [.update])
        #expect(queued[0].baseVersion == 7)
        let shadow = try #require(try test.shadow("n-1"))
        #expect(shadow.baseVersion == 7)
        #expect(shadow.baseData == ["title": "Server"])
        #expect(shadow.serverData == ["title": "Server"])
        let record = try #require(try test.record("n-1"))
        #expect(record.data == ["title": "Local"])
        #expect(record.version == 7)
        #expect(record.updatedBy == "server-user")
    }

    @Test("changes never uploaded combine into one queued operation that keeps its opId")
    func changesCombine() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 3, data: ["title": "A", "count": 1])])
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["title": "B"]))
        let first = try test.queued()
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 2]))
        let combined = try test.queued()
        #expect(combined.count == 1)
        #expect(combined[0].opId == first[0].opId)
        #expect(combined[0].kind == .patch)
        #expect(combined[0].data == ["title": "B", "count": 2])
        #expect(combined[0].baseVersion == 3)
        #expect(try test.record("n-1")?.data == ["title": "B", "count": 2])

        // Create then patch is one create.
        try test.store.write(collection: "notes", id: "n-2", change: .create(["title": "new"]))
        try test.store.write(collection: "notes", id: "n-2", change: .patch(["count": 5]))
        let creates = try test.queued().filter { $0.recordID == "n-2" }
        #expect(creates.map(\.kind) == [.create])
        #expect(creates[0].data == ["title": "new", "count": 5])
        #expect(creates[0].baseVersion == nil)
    }

    @Test("a create then a delete cancel out: nothing is queued and nothing is shown")
    func createThenDeleteCancels() throws {
        let test = try TestStore()
        try test.store.write(collection: "notes", id: "n-1", change: .create(["title": "x"]))
        let record = try test.store.write(collection: "notes", id: "n-1", change: .delete)
        #expect(record == nil)
        #expect(try test.queued().isEmpty)
        #expect(try test.record("n-1") == nil)
        #expect(try test.shadow("n-1") == nil)
    }

    @Test("deleting a pulled record then making it again is one update on the pulled version")
    func deleteThenSave() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 4, data: ["title": "A"])])
        try test.store.write(collection: "notes", id: "n-1", change: .delete)
        #expect(try test.record("n-1") == nil)
        #expect(try test.queued().map(\.kind) == [.delete])
        try test.store.write(collection: "notes", id: "n-1", change: .save(["title": "again"]))
        let queued = try test.queued()
        #expect(queued.map(\.kind) == [.update])
        #expect(queued[0].baseVersion == 4)
        #expect(try test.record("n-1")?.data == ["title": "again"])
    }

    @Test("a change made while an earlier one is uploading waits for it and learns its base from the answer")
    func waitsForAttemptedChange() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 2, data: ["title": "A"])])
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["title": "B"]))
        let inFlight = try test.store.uploads.takeBatch(limit: 10)
        #expect(inFlight.count == 1)
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 9]))
        var queued = try test.queued()
        #expect(queued.count == 2)
        #expect(queued[1].waitsFor == inFlight[0].opId)
        #expect(queued[1].baseVersion == nil)
        // While the first waits for its answer, the second is not ready.
        #expect(try test.store.uploads.takeBatch(limit: 10, after: inFlight[0].sequence).isEmpty)

        _ = try test.store.uploads.recordAnswers([TestStore.applied(inFlight[0], version: 3, data: ["title": "B"])], for: inFlight)
        queued = try test.queued()
        #expect(queued.count == 1)
        #expect(queued[0].waitsFor == nil)
        #expect(queued[0].baseVersion == 3)
        #expect(try test.store.uploads.takeBatch(limit: 10).map(\.opId) == [queued[0].opId])
    }

    @Test("a write to a missing or existing record, or with invalid data, fails with its code and changes nothing")
    func refusedWrites() throws {
        let test = try TestStore()
        try test.store.write(collection: "notes", id: "n-1", change: .create(["title": "x"]))
        expectError(.alreadyExists) { try test.store.write(collection: "notes", id: "n-1", change: .create(["title": "y"])) }
        expectError(.notFound) { try test.store.write(collection: "notes", id: "n-2", change: .patch(["title": "y"])) }
        expectError(.notFound) { try test.store.write(collection: "notes", id: "n-2", change: .delete) }
        expectError(.validationFailed) { try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": "many"])) }
        expectError(.invalidArgument) { try test.store.write(collection: "notes", id: "bad id", change: .save([:])) }
        expectError(.invalidArgument) { try test.store.write(collection: "nope", id: "n-1", change: .save([:])) }
        #expect(try test.queued().count == 1)
        #expect(try test.record("n-1")?.data == ["title": "x"])
    }
}
