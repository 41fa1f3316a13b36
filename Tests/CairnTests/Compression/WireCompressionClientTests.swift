import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Synchronization
import Testing

/// The SDK's side of gzip on the wire: compressed answers read, uploads compressed once the server says it reads them,
/// plain uploads to a server that does not.
@Suite("Wire compression in the SDK")
struct WireCompressionClientTests {
    /// Sees every exchange of a client (and may rewrite the answers) on the fixture clients' transport.
    final class ObservingTransport: HTTPTransport, Sendable {
        struct Exchange: Sendable {
            var method: String
            var path: String
            var requestHeaders: [(String, String)]
            var status: Int
            var responseHeaders: [(String, String)]

            func requestHeader(_ name: String) -> String? { requestHeaders.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1 }
            func responseHeader(_ name: String) -> String? { responseHeaders.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1 }
        }

        let inner = TestTransport.make()
        let seen = Mutex<[Exchange]>([])
        let rewrite: @Sendable (TransportResponse) -> TransportResponse

        init(rewrite: @escaping @Sendable (TransportResponse) -> TransportResponse = { $0 }) { self.rewrite = rewrite }

        var exchanges: [Exchange] { seen.withLock { $0 } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let response = rewrite(try await inner.send(request))
            seen.withLock {
                $0.append(Exchange(method: request.method, path: request.url.path, requestHeaders: request.headers,
                                   status: response.status, responseHeaders: response.headers))
            }
            return response
        }

        func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
            try await inner.stream(request)
        }

        func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
            try await inner.download(request, to: destination)
        }
    }

    static func write(_ client: CairnClient, count: Int, prefix: String) throws {
        try client.writeBatch { batch in
            for index in 0..<count {
                try batch.save("notes", id: "\(prefix)-\(index)", data: [
                    "title": .string("Inspection \(index): the exits, the equipment and the logbook were checked"), "count": .integer(Int64(index)),
                ])
            }
        }
    }

    @Test("compressed and plain clients side by side get the same records")
    func sideBySide() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let zipped = ObservingTransport()
            let plain = ObservingTransport()
            let writer = try await fixture.client("alice", network: SwitchableTransport(inner: zipped))
            let compressedReader = try await fixture.client("bob", network: SwitchableTransport(inner: ObservingTransport()))
            let plainReader = try await fixture.client("bob", network: SwitchableTransport(inner: plain)) { $0.compression = false }

            try Self.write(writer, count: 300, prefix: "n")
            try await writer.sync()
            // The first answers said the server reads gzip: the batch went compressed.
            let batches = zipped.exchanges.filter { $0.path.hasSuffix("/batch") }
            #expect(!batches.isEmpty && batches.allSatisfy { $0.requestHeader("Content-Encoding") == "gzip" && $0.status == 200 })

            try await compressedReader.sync()
            try await plainReader.sync()
            let query = Query("notes", sort: [Query.SortKey("count")])
            #expect(try compressedReader.records(query).count == 300)
            #expect(try compressedReader.records(query).map(\.data) == plainReader.records(query).map(\.data))
            #expect(try compressedReader.records(query).map(\.version) == plainReader.records(query).map(\.version))

            // The plain client never asked for gzip; the writer's pages came compressed. (URLSession asks for compressed
            // answers by itself and decompresses them before the SDK sees them: only AsyncHTTPClient gets plain ones.)
            #expect(plain.exchanges.allSatisfy { $0.requestHeader("Accept-Encoding") == nil })
            if !TestTransport.usesURLSession {
                #expect(plain.exchanges.allSatisfy { $0.responseHeader("Content-Encoding") == nil })
            }
            let writerPages = zipped.exchanges.filter { $0.path.hasSuffix("/changes") }
            #expect(!writerPages.isEmpty && writerPages.allSatisfy { $0.requestHeader("Accept-Encoding") == "gzip" })
            let readerPages = plain.exchanges.filter { $0.path.hasSuffix("/changes") }
            #expect(!readerPages.isEmpty)
        }
    }

    @Test("against a server that does not read compressed bodies, uploads go plain")
    func plainServer() async throws {
        let fixture = try await Fixture.start { $0.wireCompression = false }
        try await withCleanup({ await fixture.stop() }) {
            let observed = ObservingTransport()
            let writer = try await fixture.client("alice", network: SwitchableTransport(inner: observed))
            try Self.write(writer, count: 100, prefix: "p")
            #expect(try await writer.sync().pushed == 100)
            let batches = observed.exchanges.filter { $0.path.hasSuffix("/batch") }
            #expect(!batches.isEmpty && batches.allSatisfy { $0.requestHeader("Content-Encoding") == nil && $0.status == 200 })
            #expect(observed.exchanges.allSatisfy { $0.responseHeader("Content-Encoding") == nil })
        }
    }

    @Test("a server that says it reads gzip but refuses a compressed body with 415 gets it again plain, then always plain")
    func refusedCompressedBody() async throws {
        let fixture = try await Fixture.start { $0.wireCompression = false }
        try await withCleanup({ await fixture.stop() }) {
            // A proxy in front claims gzip support the server behind it does not have.
            let observed = ObservingTransport { response in
                var response = response
                if response.status != 415 { response.headers.append(("Accept-Encoding", "gzip")) }
                return response
            }
            let writer = try await fixture.client("alice", network: SwitchableTransport(inner: observed)) { $0.batchSize = 50 }
            try Self.write(writer, count: 200, prefix: "r")
            #expect(try await writer.sync().pushed == 200)
            // The batches in flight when the first 415 came back were compressed and refused; every batch after is plain,
            // though each answer still claims gzip.
            let batches = observed.exchanges.filter { $0.path.hasSuffix("/batch") }
            let refused = batches.prefix { $0.status == 415 }
            #expect((1...2).contains(refused.count))
            #expect(refused.allSatisfy { $0.requestHeader("Content-Encoding") == "gzip" })
            #expect(batches.dropFirst(refused.count).map(\.status) == [200, 200, 200, 200])
            #expect(batches.dropFirst(refused.count).allSatisfy { $0.requestHeader("Content-Encoding") == nil })
            let reader = try await fixture.client("bob")
            #expect(try await reader.sync().pulled == 200)
        }
    }
}
