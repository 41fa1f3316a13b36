import CairnProtocol
import CairnServer
import Foundation

/// An action's backend for tests: a ``StubHTTPServer`` that checks each call's `Cairn-Signature` with the project's
/// action secret, keeps the calls, and answers with the test's handler.
///
/// ```swift
/// let secret = try await fixture.server.server.admin.actionSecret(project: Fixture.project)
/// try await TestActionBackend.with(secret: secret, { call in .json(["closed": call.arguments["jobId"] ?? nil]) }) { backend in
///     try await fixture.server.server.admin.setSchema(project: Fixture.project, Fixture.schema(actions: [
///         ActionSchema(name: "closeJob", url: backend.url)]))
///     // ... call it; backend.calls holds what arrived
/// }
/// ```
public final class TestActionBackend: Sendable {
    /// One call as the backend received it.
    public struct Call: Sendable {
        /// The JSON body: `project`, `action`, `idempotencyKey`, `arguments`, `caller`.
        public var body: JSONValue
        /// The request's headers, by lowercased name.
        public var headers: [String: String]
        /// Whether `Cairn-Signature` is the body's HMAC with the secret.
        public var signatureIsValid: Bool

        /// The caller's arguments.
        public var arguments: JSONValue { body["arguments"] ?? .null }
        /// `caller`: `user`, `role`, `claims`, `device`.
        public var caller: JSONValue { body["caller"] ?? .null }
        /// The call's idempotency key.
        public var idempotencyKey: String? { body["idempotencyKey"]?.stringValue }
    }

    /// What answers each call.
    public typealias Handler = @Sendable (Call) async throws -> StubHTTPServer.Reply

    /// The HTTP server behind it.
    public let stub: StubHTTPServer

    /// A backend checking signatures with `secret`, answering with `handler`.
    public init(secret: String, _ handler: @escaping Handler) {
        stub = StubHTTPServer { request in try await handler(Self.call(request, secret: secret)) }
        self.secret = secret
    }

    private let secret: String

    /// The URL to declare in an ``ActionSchema``.
    public var url: String { stub.url("/action") }

    /// Every call so far, oldest first.
    public var calls: [Call] { stub.requests.map { Self.call($0, secret: secret) } }

    /// Runs `body` with a started backend, stopped however `body` ends.
    public static func with<T>(secret: String, _ handler: @escaping Handler, _ body: (TestActionBackend) async throws -> T) async throws -> T {
        let backend = TestActionBackend(secret: secret, handler)
        try await backend.stub.start()
        return try await withCleanup({ await backend.stub.stop() }) { try await body(backend) }
    }

    private static func call(_ request: StubHTTPServer.Request, secret: String) -> Call {
        Call(
            body: (try? JSONValue(parsing: Array(request.body))) ?? .null, headers: request.headers,
            signatureIsValid: request.header(DeliverySignature.headerName).map { DeliverySignature.isValid($0, for: request.body, secret: secret) } ?? false)
    }
}

extension Fixture {
    /// The standard test ``schema`` with `actions` added.
    public static func schema(actions: [ActionSchema]) -> Schema {
        var schema = Self.schema
        schema.actions = actions
        return schema
    }

    /// Runs `body` with a backend answering with `handler`, and the project's schema declaring two actions at it:
    /// `closeJob` (writers and admins) and `lookUp` (every member, with the longest timeout: its handler reads through
    /// the server, which a busy machine may make slow).
    public func withActionBackend<T>(_ handler: @escaping TestActionBackend.Handler, _ body: (TestActionBackend) async throws -> T) async throws -> T {
        let secret = try await server.server.admin.actionSecret(project: Self.project)
        return try await TestActionBackend.with(secret: secret, handler) { backend in
            try await server.server.admin.setSchema(project: Self.project, Self.schema(actions: [
                ActionSchema(name: "closeJob", url: backend.url), ActionSchema(name: "lookUp", url: backend.url, timeoutSeconds: ActionSchema.timeoutRange.upperBound, role: .reader),
            ]))
            return try await body(backend)
        }
    }
}
