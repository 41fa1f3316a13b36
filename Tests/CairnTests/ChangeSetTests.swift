import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Synchronization
import Testing

/// The batch bodies a client sent, as the server read them.
final class SentBatches: Sendable {
    private let bodies = Mutex<[JSONValue]>([])

    /// Starts recording the batches `network` passes on.
    init(_ network: SwitchableTransport) {
        network.intercept { [self] request in
            // Batches travel gzip-compressed once the server said it reads them.
            if request.url.path.hasSuffix("/batch"), let sent = request.body,
                let body = Gzip.isCompressed(sent) ? try? Gzip.decompress(sent, limit: 1 << 26) : sent,
                let value = try? JSONValue(parsing: [UInt8](body)) {
                self.bodies.withLock { $0.append(value) }
            }
            return nil
        }
    }

    /// Each batch: whether it was atomic and the record ids of its operations, in order.
    var batches: [(atomic: Bool, ids: [String])] {
        bodies.withLock { bodies in
            bodies.map { body in
                (body["atomic"]?.boolValue ?? false, (body["operations"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
            }
        }
    }
}

@Suite("Change sets: queued, uploaded and failed as one unit")
struct ChangeSetTests {
    /// The server's live records of a collection, by id.
    static func serverRecords(_ fixture: Fixture, _ collection: String) async throws -> [String: [String: JSONValue]] {
        var records: [String: [String: JSONValue]] = [:]
        for change in try await fixture.pullAll("ada", collection).changes {
            if !change.deleted, !change.gone { records[change.id] = change.data ?? [:] }
        }
        return records
    }

    /// alice with n1 and n2 synced, then a change set touching n1 and creating n3 with `priority` as a string, which the
    /// server's schema (grown meanwhile) refuses.
    static func refusedSet(_ fixture: Fixture, network: SwitchableTransport, log: CapturedLog = CapturedLog()) async throws -> CairnClient {
        let alice = try await fixture.client("alice", network: network) { $0.logger = log.logger() }
        try alice.save("notes", id: "n1", data: ["title": "one"])
        try alice.save("notes", id: "n2", data: ["title": "two"])
        try await alice.sync()
        try alice.writeChangeSet { set in
            try set.patch("notes", id: "n1", ["title": "one, edited"])
            try set.delete("notes", id: "n2")
            try set.create("notes", id: "n3", data: ["title": "three", "priority": "high"])
        }
        var grown = Fixture.schema
        grown.collections[0].fields.append(FieldSchema(name: "priority", type: .integer))
        try await fixture.server.server.admin.setSchema(project: Fixture.project, grown)
        return alice
    }

    @Test("a change set with one operation the server refuses is applied not at all and fails as one entry; retried after fixing, it lands whole")
    func refusedThenRetried() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let sent = SentBatches(network)
            let log = CapturedLog()
            let alice = try await Self.refusedSet(fixture, network: network, log: log)

            let summary = try await alice.sync()
            #expect(summary.failed == 3)
            #expect(summary.pushed == 0)
            let logged = try #require(log.entries("change set refused").first)
            #expect(logged.metadata["cairn.operations"] == "3" && logged.metadata["cairn.error"] == "validation_failed")
            #expect(log.entries("change refused").count == 3)
            #expect(sent.batches.last?.atomic == true)
            #expect(sent.batches.last?.ids == ["n1", "n2", "n3"])
            // Nothing of the set reached the server.
            #expect(try await Self.serverRecords(fixture, "notes") == ["n1": ["title": "one"], "n2": ["title": "two"]])

            let failed = try alice.failedOperations()
            #expect(failed.count == 1)
            let entry = try #require(failed.first)
            #expect(entry.changeSet != nil)
            #expect(entry.recordID == "n3")
            #expect(entry.error.code == .validationFailed)
            #expect(entry.changeSetOperations.map(\.recordID) == ["n1", "n2", "n3"])
            #expect(entry.changeSetOperations.map(\.error.code) == [.batchAborted, .batchAborted, .validationFailed])
            #expect(await alice.status().failedUploads == 1)
            // The set's changes still show locally.
            #expect(try alice.record("notes", id: "n1")?.data["title"] == "one, edited")
            #expect(try alice.record("notes", id: "n2") == nil)

            // Retried unchanged, the set is refused at once by the schema the client learned: nothing moves.
            let unchanged = #expect(throws: CairnError.self) { try alice.retryFailed(entry.id) }
            #expect(unchanged?.code == .validationFailed)
            #expect(try alice.failedOperations() == failed)

            // Fixed, it is queued again whole as a new set (any of its ids names the entry; `data` replaces the payload
            // of the operation that failed), and lands whole.
            try alice.retryFailed(entry.changeSetOperations[0].id, data: ["title": "three", "priority": 3])
            #expect(try alice.failedOperations().isEmpty)
            let requeued = try alice.pendingOperations()
            #expect(requeued.map(\.recordID) == ["n1", "n2", "n3"])
            #expect(Set(requeued.map(\.changeSet)).count == 1 && requeued[0].changeSet != nil && requeued[0].changeSet != entry.changeSet)
            let fixed = try await alice.sync()
            #expect(fixed.pushed == 3 && fixed.failed == 0)
            #expect(try alice.failedOperations().isEmpty && alice.pendingOperations().isEmpty)
            #expect(try await Self.serverRecords(fixture, "notes") == ["n1": ["title": "one, edited"], "n3": ["title": "three", "priority": 3]])
            #expect(try await alice.verify("notes").matches)
        }
    }

    @Test("a failed change set discarded as one shows the server's state again for every record it touched")
    func discarded() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await Self.refusedSet(fixture, network: SwitchableTransport())
            try await alice.sync()
            let entry = try #require(try alice.failedOperations().first)

            try alice.discardFailed(entry.id)
            #expect(try alice.failedOperations().isEmpty)
            #expect(await alice.status().failedUploads <= 1)
            #expect(try alice.record("notes", id: "n1")?.data == ["title": "one"])
            #expect(try alice.record("notes", id: "n1")?.hasPendingChanges == false)
            #expect(try alice.record("notes", id: "n2")?.data == ["title": "two"])
            #expect(try alice.record("notes", id: "n3") == nil)
            try await alice.sync()
            #expect(try await alice.verify("notes").matches)
        }
    }

    @Test("an operation of a change set in conflict fails the whole set with conflict; nothing of it is applied")
    func conflictFailsTheSet() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let bob = try await fixture.client("bob")
            try alice.save("tasks", id: "t1", data: ["title": "first", "rank": 1])
            try await alice.sync()
            try await bob.sync()
            try bob.patch("tasks", id: "t1", ["rank": 5])
            try await bob.sync()

            // `tasks` rejects stale changes: alice's patch of t1 conflicts, so t2 is not created either.
            try alice.writeChangeSet { set in
                try set.create("tasks", id: "t2", data: ["title": "second", "rank": 2])
                try set.patch("tasks", id: "t1", ["rank": 2])
            }
            let summary = try await alice.sync()
            #expect(summary.failed == 2 && summary.conflicts == 0)
            let entry = try #require(try alice.failedOperations().first)
            #expect(entry.error.code == .conflict)
            #expect(entry.recordID == "t1")
            #expect(entry.changeSetOperations.map(\.error.code) == [.batchAborted, .conflict])
            #expect(try await Self.serverRecords(fixture, "tasks") == ["t1": ["title": "first", "rank": 5]])

            // Retried, the operation in conflict builds on the state the server answered with: the set applies over bob's change.
            try alice.retryFailed(entry.id)
            try await alice.sync()
            #expect(try await Self.serverRecords(fixture, "tasks") == ["t1": ["title": "first", "rank": 2], "t2": ["title": "second", "rank": 2]])
        }
    }

    @Test("combining: a set's writes fold only into its own operations; outside changes queue beside them, never into them")
    func combining() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let sent = SentBatches(network)
            let alice = try await fixture.client("alice", network: network)
            try alice.save("notes", id: "a", data: ["title": "a0"])
            try await alice.sync()
            network.isOnline = false

            // Outside before: the set's patch of `a` is queued after it, not folded into it.
            try alice.patch("notes", id: "a", ["title": "a1"])
            try alice.writeChangeSet { set in
                try set.patch("notes", id: "a", ["done": true])
                // Inside the set: create + patch is one create; create + delete is nothing.
                try set.create("notes", id: "b", data: ["title": "b0"])
                try set.patch("notes", id: "b", ["count": 2])
                try set.create("notes", id: "gone", data: ["title": "never"])
                try set.delete("notes", id: "gone")
            }
            // Outside after: queued after the set's operation, not folded into it.
            try alice.patch("notes", id: "b", ["title": "b1"])
            try alice.save("notes", id: "c", data: ["title": "c0"])

            let queued = try alice.pendingOperations()
            let changeSet = try #require(queued.first { $0.changeSet != nil }?.changeSet)
            #expect(queued.map { "\($0.recordID) \($0.kind.rawValue) \($0.changeSet == nil ? "-" : "set")" }
                == ["a patch -", "a patch set", "b create set", "b patch -", "c create -"])
            #expect(queued[1].data == ["done": true])
            #expect(queued[2].data == ["title": "b0", "count": 2])
            #expect(queued[1].waitsFor == queued[0].opId && queued[3].waitsFor == queued[2].opId)
            #expect(queued.filter { $0.changeSet == changeSet }.count == 2)

            network.isOnline = true
            try await alice.sync()
            #expect(try alice.pendingOperations().isEmpty && alice.failedOperations().isEmpty)
            // The set went alone, atomic and whole; the other batches were not atomic and held none of its operations.
            let batches = sent.batches
            #expect(batches.filter(\.atomic).map(\.ids) == [["a", "b"]])
            #expect(batches.filter { !$0.atomic }.allSatisfy { !$0.ids.contains("b") || $0.ids == ["b"] })
            #expect(try await Self.serverRecords(fixture, "notes") == [
                "a": ["title": "a1", "done": true], "b": ["title": "b1", "count": 2], "c": ["title": "c0"],
            ])
        }
    }

    @Test("a change set queued on a file store is still one set after the client reopens, and uploads as one")
    func acrossRestarts() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let first = try await fixture.client("alice", store: .file(path))
            try await first.sync()
            try first.writeChangeSet { set in
                for index in 0..<5 { try set.save("notes", id: "r\(index)", data: ["title": .string("r\(index)")]) }
            }
            let changeSet = try #require(try first.pendingOperations().first?.changeSet)
            try await first.close()

            let network = SwitchableTransport()
            let sent = SentBatches(network)
            let alice = try await fixture.client("alice", store: .file(path), network: network) { $0.batchSize = 2 }
            #expect(try alice.pendingOperations().map(\.changeSet) == Array(repeating: changeSet, count: 5))
            let summary = try await alice.sync()
            #expect(summary.pushed == 5)
            // Larger than the batch size, the set still went as one atomic batch.
            #expect(sent.batches.map(\.atomic) == [true])
            #expect(try await Self.serverRecords(fixture, "notes").count == 5)
        }
    }

    @Test("a change set larger than a server takes in one batch is refused at write time and nothing is written")
    func tooLargeRefusedLocally() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let error = #expect(throws: CairnError.self) {
                try alice.writeChangeSet { set in
                    for index in 0...BatchRequest.defaultMaximumOperations { try set.save("notes", id: "r\(index)", data: ["title": "x"]) }
                }
            }
            #expect(error?.code == .payloadTooLarge)
            #expect(try alice.pendingOperations().isEmpty)
            #expect(try alice.record("notes", id: "r0") == nil)

            let big = String(repeating: "x", count: 4 << 20)
            let bytes = #expect(throws: CairnError.self) {
                try alice.writeChangeSet { set in
                    for index in 0..<3 { try set.save("notes", id: "big\(index)", data: ["title": .string(big)]) }
                }
            }
            #expect(bytes?.code == .payloadTooLarge)
            #expect(try alice.pendingOperations().isEmpty)
        }
    }
}

@Suite("Uploads bounded in bytes")
struct UploadBytesTests {
    @Test("batches are cut by the encoded size of their operations; one larger than the limit goes alone")
    func splitByBytes() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let sent = SentBatches(network)
            let alice = try await fixture.client("alice", network: network) { $0.batchBytes = 10_000 }
            let text = String(repeating: "y", count: 3000)
            for index in 0..<7 { try alice.save("notes", id: "s\(index)", data: ["title": .string(text)]) }
            try alice.save("notes", id: "huge", data: ["title": .string(String(repeating: "z", count: 25_000))])
            try alice.save("notes", id: "tail", data: ["title": "small"])

            let summary = try await alice.sync()
            #expect(summary.pushed == 9)
            // Three records of ~3 kB fit in 10 kB; the 25 kB record goes alone.
            #expect(sent.batches.map(\.ids) == [["s0", "s1", "s2"], ["s3", "s4", "s5"], ["s6"], ["huge"], ["tail"]])
            #expect(try await ChangeSetTests.serverRecords(fixture, "notes").count == 9)
        }
    }

    @Test("an operation larger than the server's limit lands in the failed list and does not block the queue")
    func overTheServerLimit() async throws {
        let fixture = try await Fixture.start { $0.maximumBatchBytes = 40_000 }
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice") { $0.batchBytes = 100_000 }
            try alice.save("notes", id: "before", data: ["title": "small"])
            try alice.save("notes", id: "huge", data: ["title": .string(String(repeating: "z", count: 50_000))])
            try alice.save("notes", id: "after", data: ["title": "small"])

            let summary = try await alice.sync()
            #expect(summary.pushed == 2 && summary.failed == 1)
            let failed = try alice.failedOperations()
            #expect(failed.map(\.recordID) == ["huge"])
            #expect(failed.first?.error.code == .payloadTooLarge)
            #expect(try alice.pendingOperations().isEmpty)
            #expect(try await ChangeSetTests.serverRecords(fixture, "notes").keys.sorted() == ["after", "before"])

            // A change set this server finds too large cannot be split: it fails whole, as one entry.
            try alice.discardFailed(try #require(failed.first).id)
            try alice.writeChangeSet { set in
                try set.patch("notes", id: "before", ["title": "edited"])
                try set.save("notes", id: "huge", data: ["title": .string(String(repeating: "z", count: 50_000))])
            }
            let setSummary = try await alice.sync()
            #expect(setSummary.failed == 2)
            let entry = try #require(try alice.failedOperations().first)
            #expect(try alice.failedOperations().count == 1)
            #expect(entry.error.code == .payloadTooLarge && entry.changeSetOperations.count == 2)
            #expect(try await ChangeSetTests.serverRecords(fixture, "notes")["before"] == ["title": "small"])
        }
    }
}
