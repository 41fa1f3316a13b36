import CairnProtocol
import Foundation

/// An action call queued on this device by ``CairnClient/enqueue(action:arguments:)``, waiting for a sync to send it
/// after the writes made before it.
///
/// ```swift
/// for call in try client.queuedActions() { print(call.action, call.key, call.attempts) }
/// ```
public struct QueuedAction: Codable, Sendable, Hashable, Identifiable {
    /// The idempotency key it is sent with, every attempt: the server calls the backend once per key.
    public var key: String
    /// The action's name.
    public var action: String
    /// The arguments for the backend.
    public var arguments: JSONValue
    /// When it was queued.
    public var createdAt: Date
    /// How many times a sync tried to send it.
    public var attempts: Int

    /// `Identifiable`: the idempotency key.
    public var id: String { key }

    /// A queued call.
    public init(key: String, action: String, arguments: JSONValue, createdAt: Date, attempts: Int) {
        self.key = key
        self.action = action
        self.arguments = arguments
        self.createdAt = createdAt
        self.attempts = attempts
    }
}
