import CairnProtocol
import CairnTesting
import Foundation
import Synchronization
import Testing

@testable import Cairn

/// Pages grow on links whose round trip is long beside a page's transfer, so the link never waits on a round trip;
/// on loopback and fast links they keep the configured size.
@Suite("Page sizing by the link's round trip")
struct PageSizingTests {
    @Test("a long round trip beside a fast body grows pages until a body lasts two round trips")
    func growsForLongRoundTrips() {
        let sizer = PageSizer(base: 2000)
        // 2000 records in 100 ms: 20,000 a second; a round trip of 60 ms needs 2400 records per page.
        sizer.observe(records: 2000, headWait: .milliseconds(75), serverTime: .milliseconds(15), body: .milliseconds(100))
        #expect(sizer.limit == 2400)
        #expect(sizer.roundTrip == .milliseconds(60))
        // A body that came with its head: any page arrives at once, so the largest.
        sizer.observe(records: 2400, headWait: .milliseconds(80), serverTime: .milliseconds(20), body: .zero)
        #expect(sizer.limit == PageSizer.largest)
        // The link keeps carrying a page while the device writes another.
        #expect(sizer.pagesAhead == 2)
    }

    @Test("the round trip is the smallest seen: a page queued behind another's body does not count its wait")
    func smallestRoundTrip() {
        let sizer = PageSizer(base: 100)
        sizer.observe(records: 100, headWait: .milliseconds(40), serverTime: .milliseconds(10), body: .milliseconds(100))
        sizer.observe(records: 100, headWait: .milliseconds(900), serverTime: .milliseconds(10), body: .milliseconds(100))
        #expect(sizer.roundTrip == .milliseconds(30))
        #expect(sizer.limit == 100)
    }

    @Test("loopback, a server that does not say its time, and empty pages change nothing")
    func nothingToLearn() {
        let sizer = PageSizer(base: 500)
        sizer.observe(records: 500, headWait: .microseconds(1500), serverTime: .microseconds(200), body: .zero)
        sizer.observe(records: 500, headWait: .milliseconds(300), serverTime: nil, body: .zero)
        sizer.observe(records: 0, headWait: .milliseconds(300), serverTime: .zero, body: .zero)
        #expect(sizer.limit == 500)
        #expect(sizer.pagesAhead == 1)
        #expect(PageSizer(base: 50_000).limit == PageSizer.largest)
        #expect(PageSizer(base: 0).limit == 1)
    }

    @Test("Server-Timing is written and read in W3C's form")
    func serverTimingHeader() {
        #expect(ServerTiming.header("feed", milliseconds: 12.345) == "feed;dur=12.3")
        #expect(ServerTiming.header("feed", milliseconds: -3) == "feed;dur=0.0")
        #expect(ServerTiming.milliseconds("feed", in: "feed;dur=12.3") == 12.3)
        #expect(ServerTiming.milliseconds("feed", in: "db;dur=1, feed;desc=\"read\";dur=4") == 4)
        #expect(ServerTiming.milliseconds("feed", in: "db;dur=1") == nil)
        #expect(ServerTiming.milliseconds("feed", in: "feed;dur=abc") == nil)
        #expect(ServerTiming.milliseconds("feed", in: nil) == nil)
    }

    /// Notes the `limit` of every changes page asked for.
    final class LimitRecorder: HTTPTransport, Sendable {
        let inner = TestTransport.make()
        private let state = Mutex<[Int]>([])
        var limits: [Int] { state.withLock { $0 } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            if request.url.path.hasSuffix("/changes"), let query = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems,
                let limit = query.first(where: { $0.name == "limit" })?.value.flatMap(Int.init)
            {
                state.withLock { $0.append(limit) }
            }
            return try await inner.send(request)
        }

        func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
            try await inner.stream(request)
        }
    }

    @Test("over a link with a 200 ms round trip, a pull asks for larger pages after its first ones, and pulls everything")
    func pullGrowsPagesOverSlowLink() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let operations = (0..<800).map { index in
                SyncOperation(opId: newOpID(), collection: "notes", id: "n-\(index)", op: .create, data: ["title": .string("Note \(index)")])
            }
            _ = try await fixture.push("alice", operations)
            // A fast link far away: a page of 100 small notes arrives in a moment, a round trip takes 200 ms.
            let link = try await ShapedLink.start(upstreamPort: fixture.server.port, profile: try LinkProfile(parsing: "1000mbit,200ms"))
            try await withCleanup({ await link.stop() }) {
                let recorder = LimitRecorder()
                var configuration = CairnConfiguration(
                    serverURL: link.baseURL, project: Fixture.project, device: "far-away",
                    credentials: .password(user: "bob", password: TestServer.password), store: .inMemory)
                configuration.pageSize = 100
                // Sizing belongs to page-by-page pulls (servers from before streams).
                configuration.streamsPages = false
                let reader = try await CairnClient.open(configuration, transport: recorder)
                #expect(try await reader.pull(["notes"]).pulled == 800)
                let limits = recorder.limits
                #expect(limits.first == 100)
                // How soon they grow follows measured times, which a busy machine skews (once 8 requests, the last
                // larger): that they grow is the claim.
                #expect(limits.contains { $0 > 100 }, "pages never grew: \(limits)")
            }
        }
    }
}
