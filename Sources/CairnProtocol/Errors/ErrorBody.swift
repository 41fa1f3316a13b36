/// The error object of PROTOCOL.md: `{"code", "message", "details"?}`.
public struct ErrorBody: Codable, Sendable, Hashable, Error, CustomStringConvertible {
    /// The stable code, such as `validation_failed`; compare it with ``ErrorCode``'s static members.
    public var code: ErrorCode
    /// A human-readable message that says what to do.
    public var message: String
    /// Machine-readable context, such as the offending `field`.
    public var details: [String: JSONValue]?

    /// Creates an error object; leave `details` `nil` unless there is context to name, such as `["field": "title"]`.
    public init(code: ErrorCode, message: String, details: [String: JSONValue]? = nil) {
        self.code = code
        self.message = message
        self.details = details
    }

    /// `code: message`, such as `not_found: no such collection`; `details` are left out.
    public var description: String { "\(code): \(message)" }
}

/// The body of every non-2xx response: `{"error": {...}}`.
public struct ErrorEnvelope: Codable, Sendable {
    /// The error object: its `code`, `message` and optional `details`.
    public var error: ErrorBody

    /// Wraps an error object as the `{"error": {...}}` body of a non-2xx response.
    public init(error: ErrorBody) { self.error = error }
}
