import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Synchronization
import Testing

/// Pulls of several pages per answer (`pages=`): each page committed as it arrives, a cut answer resumed from the
/// last page committed, and a server that answers one page at a time pulled page by page.
@Suite("Pulls in answers of several pages")
struct PageStreamPullTests {
    /// A transport in front of the real one that hands a streamed answer's body over in small chunks, and cuts the first
    /// such answer at `cutAt` (a fraction of its plain bytes), like a link that drops; or, with `oldServer`, drops
    /// `pages=` from every request, as a server from before streams ignores it.
    final class PageLink: HTTPTransport, Sendable {
        let inner = TestTransport.make()
        let cutAt: Double?
        let oldServer: Bool
        private let state = Mutex<(cut: Bool, urls: [URL], lastHandedCursor: String?)>((false, [], nil))

        init(cutAt: Double? = nil, oldServer: Bool = false) {
            self.cutAt = cutAt
            self.oldServer = oldServer
        }

        /// The changes requests made, in order.
        var changesURLs: [URL] { state.withLock { $0.urls } }
        /// The cursor of the last whole page handed over before the cut (nil when the cut came before any).
        var cursorBeforeCut: String? { state.withLock { $0.lastHandedCursor } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            var request = request
            guard request.url.path.hasSuffix("/changes") else { return try await inner.send(request) }
            if oldServer, var parts = URLComponents(url: request.url, resolvingAgainstBaseURL: false) {
                parts.queryItems = parts.queryItems?.filter { $0.name != PageStream.parameter }
                request.url = parts.url!
            }
            let cut = state.withLock { state -> Double? in
                state.urls.append(request.url)
                defer { if cutAt != nil { state.cut = true } }
                return state.cut ? nil : cutAt
            }
            guard let streamed = request.streamedBody else { return try await inner.send(request) }
            request.streamedBody = nil
            let response = try await inner.send(request)
            guard response.status == 200 else { return response }
            // The body arrives in small chunks; with a cut, it stops at the cut's byte.
            var body = response.body
            var cutError: CairnError?
            if let cut {
                let end = max(1, min(body.count - 1, Int(Double(body.count) * cut)))
                body = Data(body[..<end])
                let whole = body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
                let cursor = try whole.last.map { try CairnJSON.decode(ChangesPage.self, from: Data($0)).cursor }
                state.withLock { $0.lastHandedCursor = cursor }
                cutError = CairnError(.networkUnavailable, "the link dropped (test)", isRetryable: true)
            }
            var offset = body.startIndex
            while offset < body.endIndex {
                let next = min(offset + 4096, body.endIndex)
                try await streamed(Data(body[offset..<next]))
                offset = next
            }
            if let cutError { throw cutError }
            return TransportResponse(status: response.status, headers: response.headers, body: Data())
        }

        func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
            try await inner.stream(request)
        }
    }

    static func seed(_ fixture: Fixture, count: Int) async throws {
        for start in stride(from: 0, to: count, by: 250) {
            _ = try await fixture.push("alice", (start..<min(start + 250, count)).map { index in
                SyncOperation(opId: newOpID(), collection: "notes", id: "n-\(index)", op: .create, data: ["title": .string("note \(index)")])
            })
        }
    }

    /// Cut points drawn at random (seeded, so a failure repeats): before the first page ends, inside a page, on a
    /// line's end.
    static let cutPoints: [Double] = {
        var random = SplitMix(seed: 37)
        return [0.001, 0.5] + (0..<6).map { _ in Double.random(in: 0..<1, using: &random) }
    }()

    @Test("an answer cut at random points keeps its whole pages; the pull goes on from the last one committed, each record applied once",
          arguments: cutPoints)
    func cutAnswer(at cut: Double) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await Self.seed(fixture, count: 500)
            let link = PageLink(cutAt: cut)
            let bob = try await fixture.client("bob", network: SwitchableTransport(inner: link)) {
                $0.pageSize = 50
                $0.compression = false
            }
            let summary = try await bob.pull(["notes"])
            #expect(summary.pulled == 500, "no gap and no duplicate: the cut page came again, whole, in the next answer")
            #expect(try bob.count(Query("notes")) == 500)
            let urls = link.changesURLs
            #expect(urls.count >= 2, "\(urls)")
            #expect(urls.allSatisfy { $0.query?.contains("\(PageStream.parameter)=") == true })
            let since = URLComponents(url: urls[1], resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "since" }?.value
            #expect(since == link.cursorBeforeCut, "the second answer starts after the last whole page")
            #expect(try await bob.verify("notes").matches)
        }
    }

    @Test("a server that answers one page at a time is pulled page by page, and everything arrives")
    func oldServer() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await Self.seed(fixture, count: 300)
            let link = PageLink(oldServer: true)
            let bob = try await fixture.client("bob", network: SwitchableTransport(inner: link)) {
                $0.pageSize = 100
                $0.adaptsPageSize = false
            }
            let summary = try await bob.pull(["notes"])
            #expect(summary.pulled == 300)
            #expect(link.changesURLs.count == 3)
            #expect(try await bob.verify("notes").matches)
        }
    }
}
