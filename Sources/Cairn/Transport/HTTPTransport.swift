import Foundation

/// One HTTP request of the SDK.
public struct TransportRequest: Sendable {
    /// The HTTP method in upper case: `GET`, `POST`, `PUT`.
    public var method: String
    /// The full URL: the configuration's ``CairnConfiguration/serverURL`` plus a `/v1/...` path and query.
    public var url: URL
    /// Header name and value pairs in sending order, such as `Authorization` and `Cairn-Client-ID`; a name may repeat.
    public var headers: [(String, String)]
    /// The JSON body, or `nil` for requests without one (`GET`).
    public var body: Data?
    /// The time limit of the request, then `timed_out` (default 30 seconds; the SDK passes
    /// ``CairnConfiguration/requestTimeout``): a deadline for the whole exchange on AsyncHTTPClient, the idle
    /// interval on URLSession. The live-notice stream passes a day.
    public var timeout: Duration

    /// Creates a request; a test double for ``HTTPTransport`` receives these as the SDK builds them.
    ///
    /// ```swift
    /// let request = TransportRequest(method: "GET", url: URL(string: "https://sync.example.com/health")!)
    /// let response = try await transport.send(request)
    /// ```
    public init(method: String, url: URL, headers: [(String, String)] = [], body: Data? = nil, timeout: Duration = .seconds(30)) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// One HTTP response, with its whole body.
public struct TransportResponse: Sendable {
    /// The HTTP status code, such as `200` or `409`; any status is returned, not thrown.
    public var status: Int
    /// The response headers as name and value pairs; read one with ``header(_:)``, which ignores case.
    public var headers: [(String, String)]
    /// The whole response body, empty when there is none (as for `204`).
    public var body: Data

    /// Creates a response; test doubles use it to answer the SDK, for example with a PROTOCOL.md error body.
    public init(status: Int, headers: [(String, String)], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of a header, matched without case.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
}

/// How the SDK talks HTTP. By default the client uses `URLSessionTransport` on Apple platforms and
/// ``AsyncHTTPClientTransport`` elsewhere (on Linux, FoundationNetworking streams slowly and has no background
/// sessions); apps may plug in their own, such as a `URLSession` with a background configuration, or a test double.
///
/// Implementations throw ``CairnError`` with `network_unavailable` or `timed_out` for failures to get an answer.
public protocol HTTPTransport: Sendable {
    /// Sends a request and returns the response, whatever its status.
    func send(_ request: TransportRequest) async throws -> TransportResponse
    /// Opens a stream of body chunks (for Server-Sent Events); the stream ends when the connection does.
    func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>)
}
