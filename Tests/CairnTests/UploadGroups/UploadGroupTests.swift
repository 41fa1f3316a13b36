import CairnProtocol
import CairnTesting
import Foundation
import Synchronization
import Testing

@testable import Cairn

@Suite("Upload groups, held groups and write options", .timeLimit(.minutes(20)))
struct UploadGroupTests {
    /// The batch requests a client sent: each one's opIds and the headers of `X-`.
    final class BatchLog: Sendable {
        struct Batch: Sendable {
            var ids: [String]
            var headers: [String: String]
        }

        private let batches = Mutex<[Batch]>([])
        var all: [Batch] { batches.withLock { $0 } }

        func watch(_ network: SwitchableTransport) {
            network.intercept { [self] request in
                guard request.method == "POST", request.url.path.hasSuffix("/batch"), let body = request.body else { return nil }
                let plain = body.starts(with: [0x1f, 0x8b]) ? (try? Gzip.decompress(body, limit: 64 << 20)) ?? body : body
                let batch = try? CairnJSON.decode(BatchRequest.self, from: plain)
                let headers = Dictionary(request.headers.filter { $0.0.lowercased().hasPrefix("x-") }.map { ($0.0.lowercased(), $0.1) }) { $1 }
                batches.withLock { $0.append(Batch(ids: batch?.operations.map(\.id) ?? [], headers: headers)) }
                return nil
            }
        }
    }

    @Test("push(groups:) uploads only those groups, in queue order; a full sync the rest; headers go with their batch, the tag to the server")
    func groupsTagsAndHeaders() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let log = BatchLog()
            log.watch(network)
            let alice = try await fixture.client("alice", network: network)
            let visit = WriteOptions(uploadGroup: "visit-1", customTag: "inspection/4.2", headers: ["X-Site": "north"])
            try alice.create("notes", id: "a", data: ["title": "A"], options: visit)
            try alice.create("notes", id: "plain", data: ["title": "P"])
            try alice.create("notes", id: "b", data: ["title": "B"], options: visit)
            try alice.create("notes", id: "c", data: ["title": "C"], options: WriteOptions(uploadGroup: "visit-2"))
            #expect(try alice.pendingOperations(OperationFilter(uploadGroup: "visit-1")).map(\.recordID) == ["a", "b"])
            #expect(try alice.pendingOperations(OperationFilter(customTag: "inspection/4.2")).count == 2)
            let opId = try #require(try alice.pendingOperations(OperationFilter(ids: ["a"])).first).opId

            let pushed = try await alice.push(groups: ["visit-1"])
            #expect(pushed.pushed == 2)
            #expect(Set(try alice.pendingOperations().map(\.recordID)) == ["plain", "c"])
            #expect(log.all.map(\.ids) == [["a", "b"]])
            #expect(log.all.first?.headers == ["x-site": "north"])

            // The server kept the tag with the operation, for support (admins only).
            let entry = try await fixture.http.send(.GET, "/v1/projects/\(Fixture.project)/operations/\(opId)", token: fixture.tokens["ada"])
            #expect(entry.status == 200)
            let history = try entry.decode(OperationHistoryEntry.self)
            #expect(history.tag == "inspection/4.2")
            #expect(history.result["status"] == "applied")
            #expect(try await fixture.http.send(.GET, "/v1/projects/\(Fixture.project)/operations/\(opId)", token: fixture.tokens["alice"]).status == 403)
            #expect(try await fixture.http.send(.GET, "/v1/projects/\(Fixture.project)/operations/no-such-op", token: fixture.tokens["ada"]).status == 404)

            try await alice.sync()
            #expect(try alice.pendingOperations().isEmpty)
            // Writes with other headers went in a batch of their own, without the header.
            #expect(log.all.dropFirst().allSatisfy { $0.headers["x-site"] == nil })
            #expect(Set(log.all.dropFirst().flatMap(\.ids)) == ["plain", "c"])
        }
    }

    @Test("a held group stays local and visible through sync, push, push(groups:) and the scheduler; released, it goes once, combined")
    func heldGroup() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let log = BatchLog()
            log.watch(network)
            let path = Fixture.temporaryStorePath()
            defer { try? FileManager.default.removeItem(atPath: path) }
            var alice = try await fixture.client("alice", store: .file(path), network: network)
            #expect(try alice.hold(uploadGroup: "draft"))
            #expect(try !alice.hold(uploadGroup: "draft"))
            let draft = WriteOptions(uploadGroup: "draft")
            try alice.create("notes", id: "d-1", data: ["title": "first"], options: draft)
            try alice.patch("notes", id: "d-1", ["count": 1], options: draft)
            try alice.create("notes", id: "other", data: ["title": "goes"])
            try await alice.sync()
            try await alice.push()
            try await alice.push(groups: ["draft"])
            #expect(try alice.record("notes", id: "d-1")?.data["count"] == 1)
            #expect(log.all.flatMap(\.ids) == ["other"])
            #expect(try alice.pendingOperations().map(\.recordID) == ["d-1"], "the create and the patch combined while held")

            // A relaunch remembers the hold.
            try await alice.close()
            alice = try await fixture.client("alice", store: .file(path), network: network)
            #expect(try alice.heldUploadGroups() == ["draft"])
            try await alice.sync()
            #expect(log.all.flatMap(\.ids) == ["other"])

            // Released: the next sync uploads it once, as one create.
            #expect(try alice.release(uploadGroup: "draft"))
            #expect(try !alice.release(uploadGroup: "draft"))
            try await alice.sync()
            #expect(log.all.flatMap(\.ids) == ["other", "d-1"])
            let bob = try await fixture.client("bob")
            try await bob.sync()
            #expect(try bob.record("notes", id: "d-1")?.data == ["title": "first", "count": 1])
            try await alice.close()
        }
    }

    @Test("a change on top of a held change of another group waits for it; the scheduler never uploads a held group")
    func heldOrderAndScheduler() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let log = BatchLog()
            log.watch(network)
            let clock = ManualClock()
            let alice = try await fixture.client("alice", network: network) {
                $0.clock = clock
                $0.scheduling = SchedulingPolicy(pushDelay: .seconds(1), interval: .seconds(3600))
            }
            try alice.hold(uploadGroup: "held")
            try alice.create("notes", id: "n", data: ["title": "held"], options: WriteOptions(uploadGroup: "held"))
            try alice.patch("notes", id: "n", ["count": 2], options: WriteOptions(uploadGroup: "free"))
            try await alice.push(groups: ["free"])
            #expect(log.all.isEmpty, "the patch waits for the held create")
            #expect(try alice.pendingOperations().count == 2)

            let run = Task { await alice.run() }
            defer { run.cancel() }
            // The scheduler's first sync and a push after a write: nothing held goes.
            try alice.create("notes", id: "free-1", data: ["title": "x"])
            try await waitUntil {
                clock.advance(by: .seconds(1))
                return try alice.pendingOperations().map(\.recordID) == ["n", "n"]
            }
            #expect(log.all.flatMap(\.ids) == ["free-1"])
            // Released: the scheduler uploads both, in order.
            try alice.release(uploadGroup: "held")
            try await waitUntil {
                clock.advance(by: .seconds(1))
                return try alice.pendingOperations().isEmpty
            }
            #expect(log.all.flatMap(\.ids) == ["free-1", "n", "n"])
            run.cancel()
            try await alice.close()
        }
    }

    @Test("combineLocalUpdates and combineLocalDeletes off upload every write as made")
    func combiningSwitches() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice") {
                $0.combineLocalUpdates = false
                $0.combineLocalDeletes = false
            }
            try alice.create("notes", id: "n", data: ["title": "a"])
            try alice.patch("notes", id: "n", ["count": 1])
            try alice.delete("notes", id: "n")
            #expect(try alice.pendingOperations().map(\.kind) == [.create, .patch, .delete])
            #expect(try await alice.sync().pushed == 3)

            let combining = try await fixture.client("bob")
            try combining.create("notes", id: "m", data: ["title": "a"])
            try combining.patch("notes", id: "m", ["count": 1])
            #expect(try combining.pendingOperations().map(\.kind) == [.create])
            try combining.delete("notes", id: "m")
            #expect(try combining.pendingOperations().isEmpty)
        }
    }

    @Test("throwUploadFailures: a sync with refused uploads throws upload_refused listing them, after doing the rest")
    func throwUploadFailures() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice") { $0.throwUploadFailures = true }
            let quiet = try await fixture.client("bob")
            // Something to pull, and a write the server refuses: its schema made `priority` an integer meanwhile.
            _ = try await fixture.push("bob", [SyncOperation(opId: newOpID(), collection: "logs", id: "l-0", op: .create, data: ["message": "x"])])
            var grown = Fixture.schema
            grown.collections[0].fields.append(FieldSchema(name: "priority", type: .integer))
            try await fixture.server.server.admin.setSchema(project: Fixture.project, grown)
            try alice.save("notes", id: "bad", data: ["title": "t", "priority": "high"])
            try alice.create("notes", id: "good", data: ["title": "fine"])
            let error = await #expect(throws: CairnError.self) { try await alice.sync() }
            #expect(error?.code == .uploadRefused)
            let listed = error?.details?["operations"]?.arrayValue ?? []
            #expect(listed.count == 1)
            #expect(listed.first?["id"] == "bad" && listed.first?["code"] == "validation_failed")
            #expect(try alice.record("logs", id: "l-0") != nil, "the pull was done")
            #expect(try alice.failedOperations().count == 1)
            #expect(try alice.history().first?.error?.contains("upload_refused") == true)

            try quiet.save("notes", id: "bad-2", data: ["title": "t", "priority": "high"])
            #expect(try await quiet.sync().failed == 1)
        }
    }

    @Test("operation filters by upload group, tag, change set and the records' data; cancel and discard take the same selection")
    func operationFilters() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.create("notes", id: "a", data: ["title": "open", "done": false], options: WriteOptions(uploadGroup: "g", customTag: "t1"))
            try alice.create("notes", id: "b", data: ["title": "closed", "done": true], options: WriteOptions(uploadGroup: "g"))
            try alice.writeChangeSet(options: WriteOptions(customTag: "set")) { set in
                try set.create("notes", id: "c", data: ["title": "in a set", "done": false])
                try set.create("tasks", id: "t", data: ["title": "also"])
            }
            let set = try #require(try alice.pendingOperations(OperationFilter(ids: ["c"])).first?.changeSet)
            #expect(try alice.pendingOperations(OperationFilter(changeSet: set)).map(\.recordID) == ["c", "t"])
            #expect(try alice.pendingOperations(OperationFilter(customTag: "set")).map(\.recordID) == ["c", "t"])
            let open = OperationFilter(collection: "notes", where: .condition("done", .eq, false))
            #expect(try alice.pendingOperations(open).map(\.recordID) == ["a", "c"])
            #expect(try alice.pendingOperations(OperationFilter(collection: "notes", uploadGroup: "g", where: .condition("done", .eq, false))).map(\.recordID) == ["a"])
            // Without a collection, each operation's record is read in its own collection; one lacking the field selects none.
            #expect(try alice.pendingOperations(OperationFilter(where: .condition("done", .eq, false))).map(\.recordID) == ["a", "c"])
            #expect(try alice.pendingOperations(OperationFilter(where: .condition("title", .eq, "also"))).map(\.recordID) == ["t"])
            #expect(throws: CairnError.self) { _ = try alice.pendingOperations(OperationFilter(where: .condition("nowhere", .eq, 1))) }
            #expect(try alice.cancelPending(OperationFilter(uploadGroup: "g", customTag: "t1")) == 1)
            #expect(try alice.record("notes", id: "a") == nil)
            #expect(try alice.pendingOperations().map(\.recordID) == ["b", "c", "t"])
        }
    }

    @Test("delete(Query) deletes every record the query selects in one transaction and queues the deletions")
    func deleteByQuery() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            for index in 1...5 { try alice.create("notes", id: "n-\(index)", data: ["title": "n", "count": .integer(Int64(index))]) }
            try await alice.sync()
            let deleted = try alice.delete(Query("notes", filter: .condition("count", .gte, 3)), options: WriteOptions(customTag: "cleanup"))
            #expect(deleted == 3)
            #expect(try alice.records(Query("notes")).map(\.id).sorted() == ["n-1", "n-2"])
            #expect(try alice.pendingOperations(OperationFilter(customTag: "cleanup")).map(\.kind) == [.delete, .delete, .delete])
            #expect(try alice.delete(Query("notes", filter: .condition("count", .gte, 3))) == 0)
            try await alice.sync()
            let bob = try await fixture.client("bob")
            try await bob.sync()
            #expect(try bob.records(Query("notes")).map(\.id).sorted() == ["n-1", "n-2"])
            expectError(.invalidArgument) { _ = try alice.delete(Query("nope")) }
        }
    }

    /// A collection's own sync task that notes the options of the operations it is given.
    final class NotingTask: CollectionSyncTask, Sendable {
        let seen = Mutex<[WriteOptions]>([])
        func upload(_ operations: [PendingOperation]) async throws -> [SyncTaskResult] {
            seen.withLock { $0 += operations.map(\.options) }
            return operations.map { _ in .rejected(ErrorBody(code: .validationFailed, message: "noted")) }
        }
    }

    @Test("a collection's sync task is given each operation with its group, tag and headers")
    func syncTaskSeesOptions() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let task = NotingTask()
            let alice = try await fixture.client("alice") { $0.syncTasks = ["tasks": task] }
            let options = WriteOptions(uploadGroup: "g", customTag: "t", headers: ["X-Tenant": "north"])
            try alice.create("tasks", id: "t-1", data: ["title": "x"], options: options)
            try await alice.sync()
            #expect(task.seen.withLock { $0 } == [options])
        }
    }

    @Test("options are checked: a bad group, a tag too long, a reserved or malformed header are invalid_argument, and nothing is written")
    func badOptions() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            for options in [
                WriteOptions(uploadGroup: "has space"), WriteOptions(customTag: String(repeating: "t", count: 201)),
                WriteOptions(customTag: "line\nbreak"), WriteOptions(headers: ["Authorization": "Bearer x"]),
                WriteOptions(headers: ["Content-Type": "text/plain"]), WriteOptions(headers: ["Cairn-Client-ID": "x"]),
                WriteOptions(headers: ["Bad Name": "x"]), WriteOptions(headers: ["X-Ok": "a\r\nInjected: b"]),
            ] {
                expectError(.invalidArgument) { try alice.create("notes", id: "n", data: ["title": "x"], options: options) }
            }
            #expect(try alice.record("notes", id: "n") == nil)
            #expect(try alice.pendingOperations().isEmpty)
            expectError(.invalidArgument) { try alice.hold(uploadGroup: "") }
        }
    }
}
