import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// An error that renders itself as PROTOCOL.md's JSON error body with its HTTP status.
///
/// Routes throw these (or CairnProtocol's `ErrorBody` values, which the server's error middleware maps to a status);
/// no route formats errors by hand.
public struct APIError: HTTPResponseError, Sendable, CustomStringConvertible {
    /// The HTTP status, such as `422 Unprocessable Content` for `validation_failed`.
    public var status: HTTPResponse.Status
    /// The wire error: `code`, `message` and optional `details`, sent as `{"error": {...}}`.
    public var body: ErrorBody
    /// Extra response headers (`Retry-After`, `WWW-Authenticate`).
    public var headers: HTTPFields

    /// An error answered with `status` and the body `{"error": {"code", "message", "details"}}`; `headers` go on the
    /// response too.
    ///
    /// ```swift
    /// throw APIError(.tooManyRequests, .rateLimited, "Too many failed sign-ins: retry later",
    ///                headers: [.retryAfter: "60"])
    /// ```
    public init(_ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String, details: [String: JSONValue]? = nil,
                headers: HTTPFields = [:]) {
        self.status = status
        self.body = ErrorBody(code: code, message: message, details: details)
        self.headers = headers
    }

    /// An error answered with `status` and an error body made elsewhere (such as by the sync layer), without extra headers.
    public init(_ status: HTTPResponse.Status, _ body: ErrorBody) {
        self.status = status
        self.body = body
        self.headers = [:]
    }

    /// `status code: message`, such as `404 not_found: collection "notes" was not found`, for logs; `details` are left out.
    public var description: String { "\(status.code) \(body.code): \(body.message)" }

    /// Renders the error as Hummingbird's response: the status, ``headers``, `Content-Type: application/json` and the
    /// body `{"error": {"code", "message", "details"}}`.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        let data = (try? CairnJSON.encode(ErrorEnvelope(error: body))) ?? Data()
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension APIError {
    static func unauthorized(_ message: String = "A valid access token is required: send Authorization: Bearer <accessToken>") -> APIError {
        APIError(.unauthorized, .unauthorized, message, headers: [.wwwAuthenticate: "Bearer"])
    }

    static func notFound(_ what: String) -> APIError { APIError(.notFound, .notFound, "\(what) was not found") }

    static func forbidden(_ message: String) -> APIError { APIError(.forbidden, .forbidden, message) }

    static func validation(_ message: String, field: String? = nil) -> APIError {
        APIError(.unprocessableContent, ErrorBody.validation(message, field: field))
    }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, .badRequest, message) }

    static func tooLarge(_ message: String) -> APIError { APIError(.contentTooLarge, .payloadTooLarge, message) }

    /// Maps a wire error body to the status PROTOCOL.md gives its code.
    static func from(_ body: ErrorBody) -> APIError {
        let status: HTTPResponse.Status
        switch body.code {
        case .validationFailed: status = .unprocessableContent
        case .incompatibleSchema, .conflict, .alreadyExists, .offsetMismatch, .uploadIncomplete, .fileNotNew, .fileNotReady:
            status = .conflict
        case .checksumMismatch: status = .unprocessableContent
        case .fileTooLarge, .quotaExceeded: status = .contentTooLarge
        case .rangeNotSatisfiable: status = .rangeNotSatisfiable
        case .notFound: status = .notFound
        case .forbidden: status = .forbidden
        case .unauthorized, .invalidCredentials: status = .unauthorized
        case .payloadTooLarge: status = .contentTooLarge
        case .rateLimited: status = .tooManyRequests
        case .cursorExpired: status = .gone
        case .badRequest: status = .badRequest
        case .unavailable: return APIError(.serviceUnavailable, .unavailable, body.message, headers: [.retryAfter: "5"])
        default: status = .internalServerError
        }
        return APIError(status, body)
    }
}
