import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A JWKS served over HTTP on a free loopback port, whose document the test may change, counting its fetches.
final class JWKSServer: Sendable {
    private let document: Mutex<Data>
    private let fetches = Atomic<Int>(0)
    private let task: Mutex<Task<Void, any Error>?> = Mutex(nil)
    private let port = Mutex(0)

    /// The JWKS's URL.
    var url: String { "http://127.0.0.1:\(port.withLock { $0 })/jwks.json" }

    /// The times the JWKS was fetched.
    var fetchCount: Int { fetches.load(ordering: .relaxed) }

    /// A server of `jwks`, listening once ``start()`` returns.
    init(_ jwks: Data) { document = Mutex(jwks) }

    /// Serves `jwks` from now on.
    func serve(_ jwks: Data) { document.withLock { $0 = jwks } }

    /// Starts listening; returns once the port is bound.
    func start() async throws {
        let router = Router()
        router.get("jwks.json") { _, _ -> Response in
            self.fetches.add(1, ordering: .relaxed)
            let body = self.document.withLock { $0 }
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "max-age=600"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: Logger(label: "jwks") { _ in SwiftLogNoOpLogHandler() })
        task.withLock { $0 = Task { try await application.runService(gracefulShutdownSignals: []) } }
        var iterator = ports.makeAsyncIterator()
        let bound = await iterator.next() ?? 0
        port.withLock { $0 = bound }
    }

    /// Stops listening.
    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = await running?.result
    }
}
