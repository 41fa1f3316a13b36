import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A tiny HTTP server for tests, on a free loopback port: every request (any method, any path) is recorded and
/// answered by the test's handler. It stands for the other systems Cairn talks to: an identity provider's JWKS, an
/// action's backend, a webhook's receiver.
///
/// ```swift
/// let stub = StubHTTPServer { request in .json(["ok": true]) }
/// try await stub.start()
/// try await withCleanup({ await stub.stop() }) {
///     // point the server at stub.url("/close"); stub.requests holds what arrived
/// }
/// ```
public final class StubHTTPServer: Sendable {
    /// A request as it arrived.
    public struct Request: Sendable {
        /// `GET`, `POST`...
        public var method: String
        /// The path, with its query string.
        public var path: String
        /// The headers, by lowercased name (the last value of a repeated one).
        public var headers: [String: String]
        /// The body's bytes.
        public var body: Data

        /// The header `name` (any case).
        public func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// An answer.
    public struct Reply: Sendable {
        /// The HTTP status.
        public var status: Int
        /// Headers to send.
        public var headers: [String: String]
        /// The body.
        public var body: Data

        /// An answer of `body` with `status` and `headers`.
        public init(status: Int = 200, headers: [String: String] = [:], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// A JSON answer.
        public static func json(_ value: JSONValue, status: Int = 200, headers: [String: String] = [:]) -> Reply {
            Reply(status: status, headers: headers.merging(["Content-Type": "application/json"]) { mine, _ in mine }, body: Data(value.jsonText().utf8))
        }

        /// A plain-text answer.
        public static func text(_ text: String, status: Int = 200) -> Reply {
            Reply(status: status, headers: ["Content-Type": "text/plain"], body: Data(text.utf8))
        }
    }

    /// What answers each request.
    public typealias Handler = @Sendable (Request) async throws -> Reply

    private let handler: Mutex<Handler>
    private let received = Mutex<[Request]>([])
    private let task: Mutex<Task<Void, any Error>?> = Mutex(nil)
    private let port = Mutex(0)

    /// A server answering with `handler` once ``start()`` returns.
    public init(_ handler: @escaping Handler) { self.handler = Mutex(handler) }

    /// Answers with `handler` from now on.
    public func answer(with handler: @escaping Handler) { self.handler.withLock { $0 = handler } }

    /// `http://127.0.0.1:PORT` and `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port.withLock { $0 })\(path)" }

    /// Every request so far, oldest first.
    public var requests: [Request] { received.withLock { $0 } }

    /// Starts listening on a free loopback port (on `port` when given: a system coming back where it was); returns
    /// once the port is bound.
    public func start(port requested: Int = 0) async throws {
        let router = Router()
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
            router.on("**", method: method) { request, _ -> Response in try await self.respond(to: request) }
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: requested)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: Logger(label: "stub") { _ in SwiftLogNoOpLogHandler() })
        task.withLock { $0 = Task { try await application.runService(gracefulShutdownSignals: []) } }
        var iterator = ports.makeAsyncIterator()
        let bound = await iterator.next() ?? 0
        port.withLock { $0 = bound }
    }

    /// Stops listening.
    public func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = await running?.result
    }

    /// Runs `body` with a started server answering with `handler`, and stops it however `body` ends.
    public static func withServer<T>(_ handler: @escaping Handler, _ body: (StubHTTPServer) async throws -> T) async throws -> T {
        let server = StubHTTPServer(handler)
        try await server.start()
        return try await withCleanup({ await server.stop() }) { try await body(server) }
    }

    private func respond(to request: Hummingbird.Request) async throws -> Response {
        var copy = request
        let buffer = try await copy.collectBody(upTo: 16 << 20)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let recorded = Request(method: request.method.rawValue, path: request.uri.description, headers: headers, body: Data(buffer: buffer))
        received.withLock { $0.append(recorded) }
        let reply = try await handler.withLock { $0 }(recorded)
        var fields = HTTPFields()
        for (name, value) in reply.headers { if let name = HTTPField.Name(name) { fields[name] = value } }
        return Response(status: .init(code: reply.status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: reply.body)))
    }
}
