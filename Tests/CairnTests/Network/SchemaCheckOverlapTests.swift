import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Synchronization
import Testing

/// A sync checks the schema (`304` when unchanged) while its first answers travel: on a link with a long round trip
/// the check costs no round trip of its own, and still no page is applied before it answers.
@Suite("The sync's schema check beside its first answers", .timeLimit(.minutes(20)))
struct SchemaCheckOverlapTests {
    /// Notes the order of the sync's requests once ``recording`` is set, and with ``holdsSchema`` holds the answer to
    /// the schema check until a changes request was sent.
    final class SchemaGate: HTTPTransport, Sendable {
        enum Event: Equatable, Sendable { case schemaAsked, changesAsked, batchAsked, schemaAnswered }
        struct State {
            var events: [Event] = []
            var recording = false
            var holds = false
            var waiting: [CheckedContinuation<Void, Never>] = []
        }
        let inner = TestTransport.make()
        private let state = Mutex(State())

        var events: [Event] { state.withLock { $0.events } }

        /// Whether `first` was noted before `second`; fails the test when either is missing.
        func noted(_ first: Event, before second: Event) throws -> Bool {
            let events = self.events
            return try #require(events.firstIndex(of: first), "\(events)") < (try #require(events.firstIndex(of: second), "\(events)"))
        }

        /// From now on, notes requests; with `holdingSchema`, holds the schema's answer until a changes request.
        func record(holdingSchema: Bool) {
            state.withLock {
                $0.events = []
                $0.recording = true
                $0.holds = holdingSchema
            }
        }

        private func note(_ request: TransportRequest) async {
            let path = request.url.path
            if path.hasSuffix("/changes") || path.hasSuffix("/batch") {
                let waiting = state.withLock { state in
                    if state.recording { state.events.append(path.hasSuffix("/batch") ? .batchAsked : .changesAsked) }
                    defer { state.waiting = [] }
                    return path.hasSuffix("/changes") ? state.waiting : []
                }
                for continuation in waiting { continuation.resume() }
            } else if path.hasSuffix("/schema") {
                await withCheckedContinuation { continuation in
                    let goes = state.withLock { state in
                        guard state.recording else { return true }
                        state.events.append(.schemaAsked)
                        // A changes request already sent lets the answer through at once.
                        if !state.holds || state.events.contains(.changesAsked) { return true }
                        state.waiting.append(continuation)
                        return false
                    }
                    if goes { continuation.resume() }
                }
            }
        }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            await note(request)
            let response = try await inner.send(request)
            if request.url.path.hasSuffix("/schema") { state.withLock { if $0.recording { $0.events.append(.schemaAnswered) } } }
            return response
        }

        func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
            await note(request)
            return try await inner.stream(request)
        }

        func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
            try await inner.download(request, to: destination)
        }

        var streamsResponseBodies: Bool { inner.streamsResponseBodies }
    }

    static func open(_ fixture: Fixture, transport: some HTTPTransport) async throws -> CairnClient {
        let configuration = CairnConfiguration(
            serverURL: fixture.server.baseURL, project: Fixture.project, device: "overlap",
            credentials: .password(user: "bob", password: TestServer.password), store: .inMemory)
        return try await CairnClient.open(configuration, transport: transport)
    }

    static func notes(_ range: Range<Int>, collection: String = "notes") -> [SyncOperation] {
        range.map { SyncOperation(opId: newOpID(), collection: collection, id: "n-\($0)", op: .create, data: ["title": .string("Note \($0)")]) }
    }

    @Test("a pull asks for its first answer before the schema check answers, and applies it after")
    func changesAskedBesideTheCheck() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", Self.notes(0..<50))
            let gate = SchemaGate()
            let client = try await Self.open(fixture, transport: gate)
            // Opening fetched the schema; from here the sync's check waits for a changes request. (Were the check to
            // come first, as it did, this pull would wait forever: the suite's time limit ends it.)
            gate.record(holdingSchema: true)
            #expect(try await client.pull(["notes"]).pulled == 50)
            #expect(try gate.noted(.changesAsked, before: .schemaAnswered), "\(gate.events)")
            #expect(try client.records(Query("notes")).count == 50)
        }
    }

    @Test("a sync with nothing queued asks for pages beside the check; with writes, it uploads after the check")
    func pushWaitsOnlyWithWrites() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", Self.notes(0..<10))
            let gate = SchemaGate()
            let client = try await Self.open(fixture, transport: gate)
            gate.record(holdingSchema: true)
            #expect(try await client.sync().pulled == 10)
            #expect(try gate.noted(.changesAsked, before: .schemaAnswered), "\(gate.events)")

            try client.create("notes", id: "mine", data: ["title": "Mine"])
            gate.record(holdingSchema: false)
            #expect(try await client.sync().pushed == 1)
            #expect(try gate.noted(.schemaAnswered, before: .batchAsked), "\(gate.events)")
        }
    }

    @Test("a schema changed between opening and the first sync: migrated before any page, its new collection pulled")
    func schemaChangedAfterOpening() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let client = try await Self.open(fixture, transport: TestTransport.make())
            var grown = Fixture.schema
            grown.collections[1].fields.append(FieldSchema(name: "owner", type: .string))
            grown.collections.append(CollectionSchema(name: "visits", fields: [FieldSchema(name: "title", type: .string)]))
            try await fixture.server.server.admin.setSchema(project: Fixture.project, grown)
            _ = try await fixture.push("alice", Self.notes(0..<5, collection: "visits"))
            _ = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "tasks", id: "t", op: .create, data: ["title": "Paint", "owner": "ana"])
            ])
            let summary = try await client.sync()
            #expect(summary.pulled == 6)
            #expect(try client.records(Query("visits")).count == 5)
            #expect(try client.record("tasks", id: "t")?.data["owner"] == "ana")
        }
    }
}
