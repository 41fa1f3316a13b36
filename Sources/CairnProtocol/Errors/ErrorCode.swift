/// A stable, machine-readable error code shared by the server's wire errors and the SDK's errors.
///
/// New codes can be added without breaking anyone: compare against the static members.
///
/// ```swift
/// if error.code == .conflict { ... }
/// ```
public struct ErrorCode: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The snake_case code as it appears on the wire, such as `"cursor_expired"`.
    public var rawValue: String
    /// Wraps any code string, known or not; an unknown code from a newer server stays readable.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a code string, as `init(rawValue:)` does: `ErrorCode("schema_unavailable")`.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Lets a string literal stand for a code: `let code: ErrorCode = "conflict"`.
    public init(stringLiteral value: String) { self.rawValue = value }
    /// The wire code itself, such as `validation_failed`.
    public var description: String { rawValue }

    /// Decodes the bare JSON string of PROTOCOL.md's `code` field; any string is accepted.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the code as a bare JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The request body is not valid JSON, or a query parameter cannot be read.
    public static let badRequest: ErrorCode = "bad_request"
    /// No token, or a bad, expired or revoked token.
    public static let unauthorized: ErrorCode = "unauthorized"
    /// Wrong username or password.
    public static let invalidCredentials: ErrorCode = "invalid_credentials"
    /// The caller's role does not allow this.
    public static let forbidden: ErrorCode = "forbidden"
    /// No such route, project, collection, record or file (or the caller may not know of it).
    public static let notFound: ErrorCode = "not_found"
    /// The HTTP method is not supported on this path.
    public static let methodNotAllowed: ErrorCode = "method_not_allowed"
    /// The record changed since the base version and the policy refused the change.
    public static let conflict: ErrorCode = "conflict"
    /// A breaking schema change without the migration steps it needs (the message names them), or a change queued
    /// against a field since removed.
    public static let incompatibleSchema: ErrorCode = "incompatible_schema"
    /// The app build is older than the oldest schema version the server serves (`426`; `details.minimumSchemaVersion`):
    /// update the app; queued changes are kept and sent after the update.
    public static let upgradeRequired: ErrorCode = "upgrade_required"
    /// The cursor is older than the tombstone retention horizon: pull a fresh snapshot.
    public static let cursorExpired: ErrorCode = "cursor_expired"
    /// The body is larger than allowed, or a batch has too many operations.
    public static let payloadTooLarge: ErrorCode = "payload_too_large"
    /// The body's `Content-Encoding` is one the server does not read (it names those it does in `Accept-Encoding`).
    public static let unsupportedMediaType: ErrorCode = "unsupported_media_type"
    /// The input has the wrong shape or a value does not fit the schema.
    public static let validationFailed: ErrorCode = "validation_failed"
    /// Too many requests (or failed logins); retry later.
    public static let rateLimited: ErrorCode = "rate_limited"
    /// An `opId` was reused for a different operation.
    public static let idempotencyMismatch: ErrorCode = "idempotency_mismatch"
    /// An atomic batch was rolled back because another of its operations failed.
    public static let batchAborted: ErrorCode = "batch_aborted"
    /// The thing already exists (a user, a project).
    public static let alreadyExists: ErrorCode = "already_exists"
    /// A chunk's `Content-Range` does not start at the upload's current offset (see the `Upload-Offset` header).
    public static let offsetMismatch: ErrorCode = "offset_mismatch"
    /// `complete` was asked before every declared byte of the file arrived.
    public static let uploadIncomplete: ErrorCode = "upload_incomplete"
    /// The bytes of a file do not hash to its declared SHA-256; they were discarded.
    public static let checksumMismatch: ErrorCode = "checksum_mismatch"
    /// Bytes were sent for a file that is no longer `new` (completed or deleted).
    public static let fileNotNew: ErrorCode = "file_not_new"
    /// A download of a file that is not `completed`.
    public static let fileNotReady: ErrorCode = "file_not_ready"
    /// A file larger than the project's file size limit (`details.limit`).
    public static let fileTooLarge: ErrorCode = "file_too_large"
    /// A file that would take the project's stored bytes over its quota (`details.limit`).
    public static let quotaExceeded: ErrorCode = "quota_exceeded"
    /// A download `Range` that starts past the end of the file.
    public static let rangeNotSatisfiable: ErrorCode = "range_not_satisfiable"
    /// The server failed; retrying may help.
    public static let internalError: ErrorCode = "internal_error"
    /// The server is not available right now; retrying may help.
    public static let unavailable: ErrorCode = "unavailable"
    /// No room left to store: the server's disk (`507`, with `Retry-After`), or the device's (the SDK's writes, syncs,
    /// downloads and caches). Nothing was lost; retry once space is freed.
    public static let storageFull: ErrorCode = "storage_full"
    /// An action's backend refused the call (`502`, `details.status` and `details.body`), or could not be reached
    /// or answered no JSON in time (`details.retryable: true`: calling again with the same idempotency key is safe).
    public static let actionFailed: ErrorCode = "action_failed"
}
