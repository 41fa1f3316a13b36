import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Synchronization
import Testing

/// A transport that holds the changes requests of the collections in `meeting` until all of them are waiting, and
/// records when each collection's changes requests start and end. A pull that asks one collection at a time never
/// brings them together, and hangs: the suite's time limit then fails it.
final class MeetingTransport: HTTPTransport, Sendable {
    let inner = TestTransport.make()
    private let meeting: Set<String>
    private let state = Mutex(State())

    private struct State {
        var waiting: [String: CheckedContinuation<Void, Never>] = [:]
        var met = false
        var events: [String] = []
    }

    init(meeting: Set<String>) { self.meeting = meeting }

    var streamsResponseBodies: Bool { inner.streamsResponseBodies }

    /// `start NAME` and `end NAME` for each changes request, in order.
    var events: [String] { state.withLock { $0.events } }

    /// The collection a changes request reads, or nil for any other request.
    private static func collection(of request: TransportRequest) -> String? {
        let parts = request.url.path.split(separator: "/")
        guard parts.last == "changes", parts.count >= 2 else { return nil }
        return String(parts[parts.count - 2])
    }

    private func around<T>(_ request: TransportRequest, _ body: () async throws -> T) async throws -> T {
        guard let name = Self.collection(of: request) else { return try await body() }
        state.withLock { $0.events.append("start \(name)") }
        if meeting.contains(name) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready: [CheckedContinuation<Void, Never>] = state.withLock { state in
                    if state.met { return [continuation] }
                    state.waiting[name] = continuation
                    guard Set(state.waiting.keys) == meeting else { return [] }
                    state.met = true
                    defer { state.waiting = [:] }
                    return Array(state.waiting.values)
                }
                for waiter in ready { waiter.resume() }
            }
        }
        defer { state.withLock { $0.events.append("end \(name)") } }
        return try await body()
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await around(request) { try await inner.send(request) }
    }

    func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
        try await around(request) { try await inner.stream(request) }
    }

    func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
        try await inner.download(request, to: destination)
    }
}

@Suite("Download concurrency: several collections pulled at once, phases still in order", .timeLimit(.minutes(20)))
struct DownloadConcurrencyTests {
    @Test("with downloadConcurrency 3 the three collections' changes requests are in flight together, and everything arrives")
    func threeAtOnce() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await DownloadGroupTests.seed(fixture)
            let transport = MeetingTransport(meeting: ["notes", "tasks", "logs"])
            let bob = try await fixture.client("bob", network: SwitchableTransport(inner: transport)) {
                $0.downloadConcurrency = 3
                // Page by page: a streaming pull also asks ahead for the next collections' first answers.
                $0.streamsPages = false
            }
            let summary = try await bob.pull()
            #expect(summary.pulled == 3)
            for (collection, id) in [("notes", "n"), ("tasks", "t"), ("logs", "l")] {
                #expect(try bob.record(collection, id: id) != nil)
                #expect(try bob.isFirstPullComplete(collection))
            }
            #expect(await bob.status().download == nil)
        }
    }

    @Test("a phase ends before the next starts: logs (phase 1) alone, then notes and tasks together")
    func phasesStayInOrder() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await DownloadGroupTests.seed(fixture)
            let transport = MeetingTransport(meeting: ["notes", "tasks"])
            let bob = try await fixture.client("bob", network: SwitchableTransport(inner: transport)) {
                $0.downloadConcurrency = 3
                $0.downloadPhases = [["logs"]]
                $0.streamsPages = false
            }
            let completed = try await DownloadGroupTests.firstPulls(bob) { try await bob.pull() }
            #expect(completed.first == "logs")
            #expect(Set(completed) == ["logs", "notes", "tasks"])
            let events = transport.events
            let logsEnd = try #require(events.lastIndex(of: "end logs"))
            let othersStart = try #require(events.firstIndex { $0 == "start notes" || $0 == "start tasks" })
            #expect(logsEnd < othersStart, "\(events)")
        }
    }

    @Test("a downloadConcurrency below 1 is invalid_argument at open")
    func invalid() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let error = await #expect(throws: CairnError.self) { _ = try await fixture.client("bob") { $0.downloadConcurrency = 0 } }
            #expect(error?.code == .invalidArgument)
        }
    }
}
