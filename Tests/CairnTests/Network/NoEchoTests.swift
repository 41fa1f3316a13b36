import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Synchronization
import Testing

/// After a push, the pull does not download the device's own accepted writes again (their versions came in the batch
/// answer), yet every change by anyone else arrives: another user, another device of the same user, a migration.
@Suite("No echo of a device's own writes")
struct NoEchoTests {
    /// Counts the bytes each way: batch bodies sent, changes answers received (as they crossed the wire).
    final class ByteCounter: HTTPTransport, Sendable {
        let inner = TestTransport.make()
        private let state = Mutex((up: 0, down: 0))
        var bytes: (up: Int, down: Int) { state.withLock { $0 } }
        var streamsResponseBodies: Bool { inner.streamsResponseBodies }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            var request = request
            // An answer of several pages is handed over as it arrives: counted chunk by chunk.
            if let streamed = request.streamedBody, request.url.path.hasSuffix("/changes") {
                request.streamedBody = { [self] chunk in
                    state.withLock { $0.down += chunk.count }
                    try await streamed(chunk)
                }
            }
            let response = try await inner.send(request)
            state.withLock { state in
                if request.url.path.hasSuffix("/batch") { state.up += request.body?.count ?? 0 }
                if request.url.path.hasSuffix("/changes") { state.down += response.body.count }
            }
            return response
        }

        func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
            try await inner.stream(request)
        }
    }

    /// Syncs `device`, which holds `count` queued writes: all go up, none comes back, and what comes down (the
    /// collections' empty answers, about 200 bytes each) is a small part of what went up.
    static func syncWithoutEcho(_ device: CairnClient, pushing count: Int, counter: ByteCounter) async throws {
        let before = counter.bytes
        let summary = try await device.sync()
        #expect(summary.pushed == count)
        #expect(summary.pulled == 0)
        let (up, down) = (counter.bytes.up - before.up, counter.bytes.down - before.down)
        #expect(down * 20 <= up, "downloaded \(down) bytes for \(up) uploaded")
    }

    static func note(_ index: Int) -> [String: JSONValue] {
        ["title": .string("Inspection \(index): \((0..<8).map { _ in UUID().uuidString }.joined(separator: " "))"), "count": .integer(Int64(index))]
    }

    @Test("pushing 300 records then syncing pulls none of them, and downloads a small part of what went up")
    func ownWritesStayUp() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let counter = ByteCounter()
            let device = try await fixture.client("alice", network: SwitchableTransport(inner: counter))
            try await device.sync()
            for index in 0..<300 { _ = try device.save("notes", id: "n-\(index)", data: Self.note(index)) }
            try await Self.syncWithoutEcho(device, pushing: 300, counter: counter)
            #expect(try device.record("notes", id: "n-7")?.data["count"] == 7)
            #expect(try device.record("notes", id: "n-7")?.hasPendingChanges == false)
            // Nothing is left to skip: the next sync asks without own versions and pulls nothing.
            #expect(try await device.sync().pulled == 0)
        }
    }

    @Test("a write by another user and by another device of the same user, to the records just pushed, arrive")
    func othersArriveInTheSameWindow() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let device = try await fixture.client("alice")
            let sameUser = try await fixture.client("alice") { $0.device = "alice-tablet" }
            try await device.sync()
            try await sameUser.sync()
            for index in 0..<3 { _ = try device.save("notes", id: "n-\(index)", data: Self.note(index)) }
            try await device.push()
            // Between the device's push and its pull: its other device and bob change what it pushed, and bob adds one.
            try await sameUser.sync()
            _ = try sameUser.patch("notes", id: "n-0", ["title": "From the tablet"])
            try await sameUser.push()
            _ = try await fixture.push("bob", [
                SyncOperation(opId: newOpID(), collection: "notes", id: "n-1", op: .patch, data: ["title": "From bob"]),
                SyncOperation(opId: newOpID(), collection: "notes", id: "b-1", op: .create, data: ["title": "Bob's"]),
            ])
            let summary = try await device.sync()
            #expect(summary.pulled == 3)
            #expect(try device.record("notes", id: "n-0")?.data["title"] == "From the tablet")
            #expect(try device.record("notes", id: "n-1")?.data["title"] == "From bob")
            #expect(try device.record("notes", id: "n-2")?.data["count"] == 2)
            #expect(try device.record("notes", id: "b-1") != nil)
        }
    }

    @Test("under data rules and through a download query, own writes do not come back; others' changes to them and new records do",
          arguments: [false, true])
    func ownWritesUnderRulesAndQueries(throughQuery: Bool) async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            let counter = ByteCounter()
            let alice = try await fixture.client("alice", network: SwitchableTransport(inner: counter))
            try await withCleanup({ try? await alice.close() }) {
                if throughQuery { try alice.createDownloadQuery(name: "west", collection: "jobs", filter: .condition("region", .eq, "west")) }
                _ = try await alice.sync()
                for index in 0..<300 {
                    _ = try alice.save("jobs", id: "a-\(index)", data: [
                        "assignee": "alice", "region": "west",
                        "title": .string("Survey \(index): \((0..<4).map { _ in UUID().uuidString }.joined(separator: " "))"),
                    ])
                }
                try await Self.syncWithoutEcho(alice, pushing: 300, counter: counter)
                // The admin edits one of hers and gives her a new one: both arrive, and nothing else.
                _ = try await fixture.push("ada", [
                    SyncOperation(opId: newOpID(), collection: "jobs", id: "a-3", op: .patch, data: ["title": "Checked by ada"]),
                    RulesFixture.job("w-1", assignee: "alice", region: "west"),
                ])
                #expect(try await alice.sync().pulled == 2)
                #expect(try alice.record("jobs", id: "a-3")?.data["title"] == "Checked by ada")
                #expect(try alice.record("jobs", id: "w-1") != nil)
                // Through the query she holds what it selects (j1 is hers, but in the north).
                let held = try alice.records(Query("jobs")).map(\.id).filter { !$0.hasPrefix("a-") }.sorted()
                #expect(held == (throughQuery ? ["w-1"] : ["j1", "w-1"]), "\(held)")
            }
        }
    }

    @Test("a lost batch answer: the device never learnt the versions, so the pull brings the states back, and nothing is lost")
    func lostAnswer() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let device = try await fixture.client("alice", network: network)
            try await device.sync()
            _ = try device.save("notes", id: "n-1", data: Self.note(1))
            network.loseResponses(1, whenPathContains: "/batch")
            _ = try? await device.push()
            _ = try await device.sync()
            try await device.sync()
            #expect(try device.pendingOperations().isEmpty)
            #expect(try device.record("notes", id: "n-1")?.data["count"] == 1)
            let server = try await fixture.pullAll("ada", "notes").changes
            #expect(server.map(\.id) == ["n-1"])
        }
    }

    @Test("a migration that rewrites the records just pushed arrives: its versions are not the device's")
    func migrationArrives() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            var base = Fixture.schema
            base.collections.append(CollectionSchema(
                name: "jobs", fields: [FieldSchema(name: "title", type: .string), FieldSchema(name: "score", type: .integer)]))
            try await fixture.server.server.admin.setSchema(project: "field", base)
            let device = try await fixture.client("alice")
            try await device.sync()
            _ = try device.save("jobs", id: "j-1", data: ["title": "Fix roof", "score": 5])
            try await device.push()
            var renamed = base
            renamed.collections[renamed.collections.count - 1].fields = [
                FieldSchema(name: "title", type: .string), FieldSchema(name: "rating", type: .integer),
            ]
            renamed.migrations = [SchemaMigration(collection: "jobs", step: .rename(from: "score", to: "rating"))]
            try await fixture.server.server.admin.setSchema(project: "field", renamed)
            try await device.sync()
            #expect(try device.record("jobs", id: "j-1")?.data == ["title": "Fix roof", "rating": 5])
        }
    }
}
