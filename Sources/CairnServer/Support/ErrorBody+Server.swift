import CairnProtocol

/// The errors the server's services throw, named: PROTOCOL.md's error object, with no HTTP in it. The HTTP edge
/// (``APIError/from(_:)``) gives each code its status and headers, once.
///
/// ```swift
/// guard let file else { throw ErrorBody.notFound("file \"\(id)\"") }   // answered 404 not_found
/// ```
extension ErrorBody {
    /// `unauthorized`: no valid access token (answered `401` with `WWW-Authenticate: Bearer`).
    static func unauthorized(_ message: String = "A valid access token is required: send Authorization: Bearer <accessToken>") -> ErrorBody {
        ErrorBody(code: .unauthorized, message: message)
    }

    /// `not_found`: "`what` was not found".
    static func notFound(_ what: String) -> ErrorBody { ErrorBody(code: .notFound, message: "\(what) was not found") }

    /// `forbidden`: the caller's role does not allow this.
    static func forbidden(_ message: String) -> ErrorBody { ErrorBody(code: .forbidden, message: message) }

    /// `payload_too_large`: a body over its limit.
    static func tooLarge(_ message: String) -> ErrorBody { ErrorBody(code: .payloadTooLarge, message: message) }

    /// `bad_request`: a request that cannot be read.
    static func badRequest(_ message: String) -> ErrorBody { ErrorBody(code: .badRequest, message: message) }
}
