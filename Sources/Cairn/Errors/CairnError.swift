import CairnProtocol
import Foundation

/// Every error the Cairn SDK throws: a stable ``code`` (shared with the server's wire codes where one applies),
/// a message that says what to do, the underlying ``cause``, and whether retrying can help.
///
/// Its description never contains record data or tokens.
///
/// ```swift
/// do { try await client.sync() } catch let error as CairnError where error.isRetryable { ... }
/// ```
public struct CairnError: Error, Sendable, CustomStringConvertible {
    /// The stable code.
    public var code: ErrorCode
    /// What went wrong and what to do about it.
    public var message: String
    /// The HTTP status, when the server answered with an error.
    public var httpStatus: Int?
    /// True when the same call may succeed later (network failures, timeouts, 5xx, 429).
    public var isRetryable: Bool
    /// The error that caused this one, if any.
    public var cause: (any Error)?

    public init(_ code: ErrorCode, _ message: String, httpStatus: Int? = nil, isRetryable: Bool = false, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.isRetryable = isRetryable
        self.cause = cause
    }

    public var description: String {
        "CairnError(\(code)\(httpStatus.map { ", HTTP \($0)" } ?? "")): \(message)"
    }
}

extension ErrorCode {
    /// The network failed or the server could not be reached.
    public static let networkUnavailable: ErrorCode = "network_unavailable"
    /// The server did not answer in time.
    public static let timedOut: ErrorCode = "timed_out"
    /// The server's answer was not what the protocol promises (malformed JSON, wrong shape).
    public static let badResponse: ErrorCode = "bad_response"
    /// The local store could not be read or written.
    public static let storeFailed: ErrorCode = "store_failed"
    /// The store belongs to another user; open it with a ``UserChangePolicy``.
    public static let userMismatch: ErrorCode = "user_mismatch"
    /// The client was signed out; open a new one.
    public static let signedOut: ErrorCode = "signed_out"
    /// No schema is known yet: the first open needs the network once.
    public static let schemaUnavailable: ErrorCode = "schema_unavailable"
    /// The operation was cancelled.
    public static let cancelled: ErrorCode = "cancelled"
    /// The SDK was asked something that does not make sense (an unknown collection, a bad id).
    public static let invalidArgument: ErrorCode = "invalid_argument"
}

extension CairnError {
    /// An error for a non-2xx answer, from its wire error body when it has one.
    static func server(status: Int, body: Data) -> CairnError {
        let retryable = status >= 500 || status == 429 || status == 408
        if let envelope = try? CairnJSON.decode(ErrorEnvelope.self, from: body) {
            return CairnError(envelope.error.code, envelope.error.message, httpStatus: status, isRetryable: retryable)
        }
        let code: ErrorCode = status >= 500 ? .unavailable : .badResponse
        return CairnError(code, "The server answered HTTP \(status) without a Cairn error body", httpStatus: status, isRetryable: retryable)
    }

    static func badResponse(_ what: String, cause: (any Error)? = nil) -> CairnError {
        CairnError(.badResponse, "The server's answer is not valid: \(what)", isRetryable: true, cause: cause)
    }

    static func invalid(_ message: String) -> CairnError { CairnError(.invalidArgument, message) }

    static func store(_ error: any Error) -> CairnError {
        if let error = error as? CairnError { return error }
        return CairnError(.storeFailed, "The local store failed: \(error)", cause: error)
    }
}
