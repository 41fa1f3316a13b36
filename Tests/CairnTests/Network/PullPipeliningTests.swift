import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Synchronization
import Testing

/// On a slow link the pull asks for the next page as soon as a page's head names its cursor, while the page's body
/// still travels, so round trips overlap the transfer.
@Suite("Pull pipelining over a slow link", .timeLimit(.minutes(20)))
struct PullPipeliningTests {
    /// Notes when each page was asked for, when its head came and when its body ended. A page's body is handed over
    /// only once the next page was asked for (up to `pages`): on a busy machine a body may arrive before the task that
    /// asks for the next page runs, and the order would say nothing. (A pull that waited for the body before asking would
    /// wait here forever: the suite's time limit ends it.)
    final class PageTimeline: HTTPTransport, Sendable {
        enum Event: Equatable, Sendable { case asked(Int), head(Int), body(Int) }
        let inner = TestTransport.make()
        let pages: Int
        private let state = Mutex((events: [Event](), pages: 0, waiting: [Int: CheckedContinuation<Void, Never>]()))

        init(pages: Int) { self.pages = pages }

        var events: [Event] { state.withLock { $0.events } }

        private func waitUntilAsked(_ page: Int) async {
            await withCheckedContinuation { continuation in
                let asked = state.withLock { state in
                    guard !state.events.contains(.asked(page)) else { return true }
                    state.waiting[page] = continuation
                    return false
                }
                if asked { continuation.resume() }
            }
        }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            guard request.url.path.hasSuffix("/changes") else { return try await inner.send(request) }
            let (page, waiting) = state.withLock { state in
                state.pages += 1
                state.events.append(.asked(state.pages))
                return (state.pages, state.waiting.removeValue(forKey: state.pages))
            }
            waiting?.resume()
            var request = request
            let head = request.responseHead
            request.responseHead = { [self] status, headers in
                self.state.withLock { $0.events.append(.head(page)) }
                head?(status, headers)
            }
            let response = try await inner.send(request)
            if page < pages { await waitUntilAsked(page + 1) }
            state.withLock { $0.events.append(.body(page)) }
            return response
        }

        func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
            try await inner.stream(request)
        }

        func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
            try await inner.download(request, to: destination)
        }
    }

    @Test("the next page is asked for when a page's head arrives, before its body ended")
    func nextPageOnHead() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let operations = (0..<3000).map { index in
                SyncOperation(opId: newOpID(), collection: "notes", id: "n-\(index)", op: .create,
                              data: ["title": .string("Note \(index) \(UUID().uuidString) \(UUID().uuidString)"), "count": .integer(Int64(index))])
            }
            for chunk in stride(from: 0, to: operations.count, by: 1000) {
                _ = try await fixture.push("alice", Array(operations[chunk..<min(chunk + 1000, operations.count)]))
            }
            // 2 Mbit/s: a page of 1000 such notes (about 60 KB compressed) takes a quarter second to arrive after its head.
            let link = try await ShapedLink.start(upstreamPort: fixture.server.port, profile: try LinkProfile(parsing: "2mbit,20ms"))
            try await withCleanup({ await link.stop() }) {
                let timeline = PageTimeline(pages: 3)
                var configuration = CairnConfiguration(
                    serverURL: link.baseURL, project: Fixture.project, device: "slow-link",
                    credentials: .password(user: "bob", password: TestServer.password), store: .inMemory)
                configuration.pageSize = 1000
                configuration.adaptsPageSize = false
                // Page by page: this is the pipeline of single-page requests (servers from before streams).
                configuration.streamsPages = false
                let reader = try await CairnClient.open(configuration, transport: timeline)
                #expect(try await reader.pull(["notes"]).pulled == 3000)

                let events = timeline.events
                #expect(events.filter { if case .asked = $0 { true } else { false } }.count == 3)
                for page in 1...2 {
                    let head = try #require(events.firstIndex(of: .head(page)))
                    let next = try #require(events.firstIndex(of: .asked(page + 1)))
                    let body = try #require(events.firstIndex(of: .body(page)))
                    #expect(head < next && next < body, "page \(page + 1) was asked for after page \(page)'s body: \(events)")
                }
                #expect(link.bytesDown > 0 && link.connections >= 1)
            }
        }
    }
}
