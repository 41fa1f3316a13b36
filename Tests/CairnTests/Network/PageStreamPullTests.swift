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
    /// such answer after `pages` whole pages and part of the next, like a link that drops; or, with `oldServer`,
    /// drops `pages=` from every request, as a server from before streams ignores it.
    final class PageLink: HTTPTransport, Sendable {
        let inner = TestTransport.make()
        let cutAfter: Int?
        let oldServer: Bool
        private let state = Mutex<(cut: Bool, urls: [URL], lastHandedCursor: String?)>((false, [], nil))

        init(cutAfter: Int? = nil, oldServer: Bool = false) {
            self.cutAfter = cutAfter
            self.oldServer = oldServer
        }

        /// The changes requests made, in order.
        var changesURLs: [URL] { state.withLock { $0.urls } }
        /// The cursor of the last whole page handed over before the cut.
        var cursorBeforeCut: String? { state.withLock { $0.lastHandedCursor } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            var request = request
            guard request.url.path.hasSuffix("/changes") else { return try await inner.send(request) }
            if oldServer, var parts = URLComponents(url: request.url, resolvingAgainstBaseURL: false) {
                parts.queryItems = parts.queryItems?.filter { $0.name != PageStream.parameter }
                request.url = parts.url!
            }
            let cut = state.withLock { state -> Int? in
                state.urls.append(request.url)
                defer { if cutAfter != nil { state.cut = true } }
                return state.cut ? nil : cutAfter
            }
            guard let streamed = request.streamedBody else { return try await inner.send(request) }
            request.streamedBody = nil
            let response = try await inner.send(request)
            guard response.status == 200 else { return response }
            // The body arrives in small chunks; with a cut, it stops 20 bytes into the page after `cut` whole ones.
            var body = response.body
            var cutError: CairnError?
            if let cut {
                let newlines = body.indices.filter { body[$0] == UInt8(ascii: "\n") }
                let end = newlines[cut - 1]
                let page = try CairnJSON.decode(ChangesPage.self, from: Data(body[(cut > 1 ? newlines[cut - 2] + 1 : body.startIndex)..<end]))
                state.withLock { $0.lastHandedCursor = page.cursor }
                body = Data(body[..<(end + 21)])
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

    @Test("an answer cut part-way keeps its whole pages; the pull goes on from the last one committed and applies each record once")
    func cutAnswer() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await Self.seed(fixture, count: 500)
            let link = PageLink(cutAfter: 3)
            let bob = try await fixture.client("bob", network: SwitchableTransport(inner: link)) {
                $0.pageSize = 50
                $0.compression = false
            }
            let summary = try await bob.pull(["notes"])
            #expect(summary.pulled == 500, "each record applied once: the cut page came again, whole, in the next answer")
            #expect(try bob.count(Query("notes")) == 500)
            let urls = link.changesURLs
            #expect(urls.count == 2, "\(urls)")
            #expect(urls.allSatisfy { $0.query?.contains("\(PageStream.parameter)=") == true })
            let since = URLComponents(url: try #require(urls.last), resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "since" }?.value
            #expect(since != nil && since == link.cursorBeforeCut, "the second answer starts after the third page")
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
