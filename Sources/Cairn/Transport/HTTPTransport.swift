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
    /// A body streamed from a file on disk instead of ``body`` (file uploads), never read into memory whole.
    public var bodyFile: TransportFileSlice?
    /// Called with the bytes sent so far (with ``bodyFile``) or received so far (with ``HTTPTransport/download(_:to:)``).
    public var progress: (@Sendable (Int64) -> Void)?
    /// Called with each chunk of a download's body as it is written, in order (to hash it on the way).
    public var received: (@Sendable (UnsafeRawBufferPointer) -> Void)?
    /// Called once with the answer's status and headers as soon as they arrive, before its body: a pull asks for its
    /// next page then (from the `Cairn-Cursor` header), while this page's body still travels. Both built-in
    /// transports call it; a transport that does not only makes slow links a little slower.
    public var responseHead: (@Sendable (_ status: Int, _ headers: [(String, String)]) -> Void)?
    /// Called with each chunk of a 2xx answer's body as it arrives, in order, instead of collecting it (a pull of
    /// several pages commits each as it comes); the next chunk is read once the call returns, and the returned
    /// response's body is then empty. Any other answer's body is collected as usual. A transport that cannot stream
    /// collects the body: the SDK then hands it over whole.
    public var streamedBody: (@Sendable (Data) async throws -> Void)?
    /// The key that seals a download's file when the store is encrypted (see ``openDownload(_:)``).
    var downloadSealing: FileSealing?
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

extension TransportRequest {
    /// Opens the file a download's body goes to (made when missing, appended to otherwise), encrypting what is
    /// written when the store is encrypted. Transports write the 2xx body through it, then close it.
    public func openDownload(_ destination: URL) throws -> KeptFileWriter {
        try KeptFileWriter(destination, sealing: downloadSealing)
    }
}

/// A byte range of a file on disk, sent as a request body.
public struct TransportFileSlice: Sendable, Hashable {
    /// The file. An encrypted store keeps it encrypted: read the bytes to send with ``read(chunk:_:)``.
    public var url: URL
    /// The bytes to send: `offset ..< offset + length`.
    public var offset: Int64
    /// How many bytes to send.
    public var length: Int64
    /// The key of the file when the store keeps it sealed (then it must be sealed).
    var sealing: FileSealing?

    /// The bytes `offset ..< offset + length` of the file at `url`.
    public init(url: URL, offset: Int64, length: Int64) {
        self.url = url
        self.offset = offset
        self.length = length
    }

    /// Reads the slice in chunks of at most `chunk` bytes, in the clear, handing each to `body` in order.
    public func read(chunk: Int = 256 * 1024, _ body: (Data) async throws -> Void) async throws {
        let reader = try reader()
        while let data = try reader.next(upTo: chunk) {
            try Task.checkCancellation()
            try await body(data)
        }
    }

    /// A reader of the slice's bytes in the clear.
    func reader() throws -> KeptFileReader {
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw CairnError(.invalidArgument, "\(url.lastPathComponent) cannot be read")
        }
        return try KeptFileReader(url, sealing: sealing, offset: offset, length: length, requireSealed: sealing != nil)
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
    public func header(_ name: String) -> String? { Self.header(name, in: headers) }

    /// The first value of header `name` in `headers`, matched without case (for an answer's head before its body).
    public static func header(_ name: String, in headers: [(String, String)]) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
}

/// How the SDK talks HTTP. By default the client uses ``URLSessionTransport`` on Apple platforms and
/// `AsyncHTTPClientTransport` elsewhere (faster on Linux than FoundationNetworking, which ``URLSessionTransport``
/// also runs on); apps may plug in their own, such as ``URLSessionTransport`` on a session configuration of theirs,
/// or a test double.
///
/// Implementations throw ``CairnError`` with `network_unavailable` or `timed_out` for failures to get an answer.
public protocol HTTPTransport: Sendable {
    /// Sends a request and returns the response, whatever its status. A ``TransportRequest/bodyFile`` is sent as
    /// the body, streamed from disk, with ``TransportRequest/progress`` told the bytes sent.
    func send(_ request: TransportRequest) async throws -> TransportResponse
    /// Opens a stream of body chunks (for Server-Sent Events); the stream ends when the connection does.
    func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>)
    /// Sends a request and, for a 2xx answer, appends the body to the file at `destination` as it arrives, through
    /// ``TransportRequest/openDownload(_:)`` (which encrypts it for an encrypted store), reporting bytes received through ``TransportRequest/progress``; the returned response's body is then
    /// empty. Any other answer's body is returned whole, and the file is left alone.
    func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse
    /// True when ``send(_:)`` hands a 2xx body to ``TransportRequest/streamedBody`` chunk by chunk as it arrives; false
    /// (the default) when it collects bodies whole. A pull then asks for fewer pages per answer, so that an answer held
    /// whole in memory stays a few pages.
    var streamsResponseBodies: Bool { get }
}

extension HTTPTransport {
    /// Bodies are collected whole unless a transport says otherwise.
    public var streamsResponseBodies: Bool { false }

    /// Downloads by collecting the whole body with ``send(_:)``, then appending it to the file: the fallback for
    /// transports that do not stream.
    public func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
        let response = try await send(request)
        guard (200..<300).contains(response.status) else { return response }
        let file = try request.openDownload(destination)
        try file.write(response.body)
        try file.close()
        response.body.withUnsafeBytes { request.received?($0) }
        request.progress?(Int64(response.body.count))
        return TransportResponse(status: response.status, headers: response.headers, body: Data())
    }
}
