import Foundation

/// One HTTP request of the SDK.
public struct TransportRequest: Sendable {
    public var method: String
    public var url: URL
    public var headers: [(String, String)]
    public var body: Data?
    public var timeout: Duration

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
    public var status: Int
    public var headers: [(String, String)]
    public var body: Data

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
