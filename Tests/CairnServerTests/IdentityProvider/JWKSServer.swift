import CairnProtocol
import CairnTesting
import Foundation
import Synchronization

/// A JWKS served over HTTP on a free loopback port (a ``StubHTTPServer``), whose document the test may change,
/// counting its fetches.
final class JWKSServer: Sendable {
    /// The document served, which the test may replace.
    private final class Document: Sendable {
        let data: Mutex<Data>
        init(_ data: Data) { self.data = Mutex(data) }
    }

    private let document: Document
    private let stub: StubHTTPServer

    /// The JWKS's URL.
    var url: String { stub.url("/jwks.json") }

    /// The times the JWKS was fetched.
    var fetchCount: Int { stub.requests.count { $0.path == "/jwks.json" } }

    /// A server of `jwks`, listening once ``start()`` returns.
    init(_ jwks: Data) {
        let document = Document(jwks)
        self.document = document
        stub = StubHTTPServer { request in
            guard request.path == "/jwks.json" else { return .text("not found", status: 404) }
            return StubHTTPServer.Reply(
                headers: ["Content-Type": "application/json", "Cache-Control": "max-age=600"], body: document.data.withLock { $0 })
        }
    }

    /// Serves `jwks` from now on.
    func serve(_ jwks: Data) { document.data.withLock { $0 = jwks } }

    /// Starts listening; returns once the port is bound.
    func start() async throws { try await stub.start() }

    /// Stops listening.
    func stop() async { await stub.stop() }
}
