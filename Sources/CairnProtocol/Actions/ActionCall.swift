/// The body of `POST /v1/projects/{project}/actions/{action}`: the arguments for the backend, the idempotency key
/// that makes the call happen once (the server makes one when it is absent), and the calling device.
///
/// ```swift
/// let body = ActionCallRequest(arguments: ["jobId": "j-7"], idempotencyKey: UUID().uuidString, device: "iPad-7")
/// ```
public struct ActionCallRequest: Codable, Sendable, Hashable {
    /// Any JSON for the backend (`null` by default); data rules do not apply to it: the backend decides.
    public var arguments: JSONValue
    /// 1 to 128 characters of an id (``Names/isValidID(_:)``); the same key answers the stored answer again.
    public var idempotencyKey: String?
    /// The calling device, passed to the backend as `caller.device`.
    public var device: String?

    /// A call's body.
    public init(arguments: JSONValue = .null, idempotencyKey: String? = nil, device: String? = nil) {
        self.arguments = arguments
        self.idempotencyKey = idempotencyKey
        self.device = device
    }

    enum CodingKeys: String, CodingKey { case arguments, idempotencyKey, device }

    /// Decodes a call's body; absent `arguments` read as `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        arguments = try container.decodeIfPresent(JSONValue.self, forKey: .arguments) ?? .null
        idempotencyKey = try container.decodeIfPresent(String.self, forKey: .idempotencyKey)
        device = try container.decodeIfPresent(String.self, forKey: .device)
    }
}

/// The `200` answer of an action call: the backend's JSON, the idempotency key of the call, and whether the answer
/// was stored from an earlier call with that key (the backend was not called again).
public struct ActionCallAnswer: Codable, Sendable, Hashable {
    /// What the backend answered (`null` for an empty body).
    public var result: JSONValue
    /// The call's idempotency key: the request's, or the one the server made.
    public var idempotencyKey: String
    /// True when the answer is the stored one of an earlier call with the same key.
    public var replayed: Bool

    /// An answer.
    public init(result: JSONValue, idempotencyKey: String, replayed: Bool) {
        self.result = result
        self.idempotencyKey = idempotencyKey
        self.replayed = replayed
    }

    enum CodingKeys: String, CodingKey { case result, idempotencyKey, replayed }

    /// Decodes an answer; an absent `result` reads as `null`, an absent `replayed` as false.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        result = try container.decodeIfPresent(JSONValue.self, forKey: .result) ?? .null
        idempotencyKey = try container.decode(String.self, forKey: .idempotencyKey)
        replayed = try container.decodeIfPresent(Bool.self, forKey: .replayed) ?? false
    }
}
