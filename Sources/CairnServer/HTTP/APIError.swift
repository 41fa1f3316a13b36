import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// An error that renders itself as PROTOCOL.md's JSON error body with its HTTP status.
///
/// The services below the routes throw CairnProtocol's `ErrorBody` (see `ErrorBody+Server.swift`), which the
/// server's error middleware maps to one of these with ``from(_:)``; only the HTTP layer makes them directly, for
/// answers that need more than the error object (`Allow`, `Content-Range`). No route formats errors by hand.
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

    /// An error answered with `status` and an error body made elsewhere (such as by the sync layer), with `headers`.
    public init(_ status: HTTPResponse.Status, _ body: ErrorBody, headers: HTTPFields = [:]) {
        self.status = status
        self.body = body
        self.headers = headers
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
        from(ErrorBody.unauthorized(message))
    }

    static func validation(_ message: String, field: String? = nil) -> APIError { from(ErrorBody.validation(message, field: field)) }

    static func badRequest(_ message: String) -> APIError { from(ErrorBody.badRequest(message)) }

    static func tooLarge(_ message: String) -> APIError { from(ErrorBody.tooLarge(message)) }

    /// The answer to a service's error: the status PROTOCOL.md gives its code, and the headers its code and
    /// `details` call for (`WWW-Authenticate`, `Retry-After`, `Upload-Offset`).
    static func from(_ body: ErrorBody) -> APIError {
        let status: HTTPResponse.Status
        var headers: HTTPFields = [:]
        switch body.code {
        case .validationFailed: status = .unprocessableContent
        case .incompatibleSchema, .conflict, .alreadyExists, .fileNotNew, .fileNotReady:
            status = .conflict
        case .offsetMismatch, .uploadIncomplete:
            status = .conflict
            if let offset = body.details?["uploadOffset"]?.integerValue { headers[.uploadOffset] = "\(offset)" }
        case .checksumMismatch: status = .unprocessableContent
        case .fileTooLarge, .quotaExceeded: status = .contentTooLarge
        case .rangeNotSatisfiable: status = .rangeNotSatisfiable
        case .notFound: status = .notFound
        case .forbidden: status = .forbidden
        case .unauthorized:
            status = .unauthorized
            headers[.wwwAuthenticate] = "Bearer"
        case .invalidCredentials: status = .unauthorized
        case .payloadTooLarge: status = .contentTooLarge
        case .unsupportedMediaType: status = .unsupportedMediaType
        case .rateLimited:
            status = .tooManyRequests
            if let seconds = body.details?["retryAfter"]?.integerValue { headers[.retryAfter] = "\(seconds)" }
        case .cursorExpired: status = .gone
        case .upgradeRequired: status = .upgradeRequired
        case .badRequest: status = .badRequest
        case .actionFailed: status = .badGateway
        case .unavailable:
            status = .serviceUnavailable
            headers[.retryAfter] = "5"
        default: status = .internalServerError
        }
        return APIError(status, body, headers: headers)
    }
}
