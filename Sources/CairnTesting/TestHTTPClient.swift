import AsyncHTTPClient
import CairnProtocol
import Foundation
import NIOCore
import NIOHTTP1

/// A reply as the tests see it: status, headers and the body, parsed as JSON when it is JSON.
public struct HTTPReply: Sendable {
    /// The HTTP status code, such as `200` or `422`; error statuses are replies, not thrown errors.
    public var status: Int
    /// The response headers, such as `X-Request-ID`, `ETag` or `Allow`.
    public var headers: HTTPHeaders
    /// The raw body; read it with ``json``, ``errorCode`` or ``decode(_:)``.
    public var body: Data

    /// The body parsed as JSON, or `nil`.
    public var json: JSONValue? { try? JSONValue(parsing: body) }

    /// The `error.code` of an error body.
    public var errorCode: String? { json?["error"]?["code"]?.stringValue }

    /// Decodes the body as a wire type.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T { try CairnJSON.decode(type, from: body) }

    /// The first value of a header.
    public func header(_ name: String) -> String? { headers.first(name: name) }
}

/// AsyncHTTPClient with its defaults, as a plain client: unlike `HTTPClient.shared` it neither asks for compressed
/// answers nor decompresses them, so tests see the bytes the server sent. Kept for the life of the process.
private let plainClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: HTTPClient.Configuration())

/// A small HTTP client for tests and tools: JSON in, ``HTTPReply`` out, never throwing for HTTP statuses.
public struct TestHTTPClient: Sendable {
    /// The server's root, such as `http://127.0.0.1:PORT`; request paths (`/v1/...`) are appended to it as text.
    public let baseURL: URL
    /// The deadline of one request, after which ``send(_:_:token:json:body:headers:)`` throws (default 60 seconds).
    public var timeout: TimeAmount = .seconds(60)

    /// A client for the server at `baseURL`, on one AsyncHTTPClient client shared by the process (which does not
    /// decompress: send `Accept-Encoding: gzip` to get, and see, compressed answers).
    ///
    /// ```swift
    /// let http = TestHTTPClient(baseURL: server.baseURL)
    /// let reply = try await http.send(.GET, "/health")
    /// #expect(reply.json?["status"] == "ok")
    /// ```
    public init(baseURL: URL) { self.baseURL = baseURL }

    /// Sends a request. `json` is encoded as the body; `body` sends raw bytes instead (as JSON unless `headers` name
    /// another `Content-Type`).
    public func send(
        _ method: HTTPMethod, _ path: String, token: String? = nil, json: JSONValue? = nil, body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws -> HTTPReply {
        var request = HTTPClientRequest(url: baseURL.absoluteString + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json.jsonText()))
        } else if let body {
            if !request.headers.contains(name: "Content-Type") { request.headers.add(name: "Content-Type", value: "application/json") }
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await plainClient.execute(request, timeout: timeout)
        let buffer = try await response.body.collect(upTo: 512 * 1024 * 1024)
        return HTTPReply(status: Int(response.status.code), headers: response.headers, body: Data(buffer: buffer))
    }

    /// Sends an encodable wire value as the body.
    public func send<T: Encodable>(_ method: HTTPMethod, _ path: String, token: String? = nil, value: T) async throws -> HTTPReply {
        try await send(method, path, token: token, body: CairnJSON.encode(value))
    }

    /// Signs in and returns the tokens; throws the wire error on failure.
    public func login(_ username: String, password: String = TestServer.password) async throws -> TokenResponse {
        let reply = try await send(.POST, "/v1/auth/login", value: LoginRequest(username: username, password: password))
        guard reply.status == 200 else {
            throw (try? reply.decode(ErrorEnvelope.self).error) ?? ErrorBody(code: .internalError, message: "login answered \(reply.status)")
        }
        return try reply.decode(TokenResponse.self)
    }
}
