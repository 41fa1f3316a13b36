/// The error object of PROTOCOL.md: `{"code", "message", "details"?}`.
public struct ErrorBody: Codable, Sendable, Hashable, Error, CustomStringConvertible {
    /// The stable code.
    public var code: ErrorCode
    /// A human-readable message that says what to do.
    public var message: String
    /// Machine-readable context, such as the offending `field`.
    public var details: [String: JSONValue]?

    public init(code: ErrorCode, message: String, details: [String: JSONValue]? = nil) {
        self.code = code
        self.message = message
        self.details = details
    }

    public var description: String { "\(code): \(message)" }
}

/// The body of every non-2xx response: `{"error": {...}}`.
public struct ErrorEnvelope: Codable, Sendable {
    /// The error.
    public var error: ErrorBody

    public init(error: ErrorBody) { self.error = error }
}
