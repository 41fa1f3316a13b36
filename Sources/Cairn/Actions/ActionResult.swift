import CairnProtocol
import Foundation

/// The outcome of a queued action call, kept on the device once a sync sent it: the backend's answer, or why the
/// call was refused (the backend's refusal, `action_failed` with `details.status`; a role that may not call it,
/// `forbidden`; an action the schema no longer has, `not_found`).
///
/// ```swift
/// for outcome in try await client.actionResults() {
///     if let result = outcome.result { print(outcome.action, result) } else { print(outcome.error?.message ?? "") }
/// }
/// ```
public struct ActionResult: Codable, Sendable, Hashable, Identifiable {
    /// The idempotency key the call was sent with (what ``CairnClient/enqueue(action:arguments:)`` returned).
    public var key: String
    /// The action's name.
    public var action: String
    /// The arguments sent.
    public var arguments: JSONValue
    /// What the backend answered; `nil` when the call was refused.
    public var result: JSONValue?
    /// Why the call was refused; `nil` when the backend answered.
    public var error: ErrorBody?
    /// The HTTP status of the refusal (`502` for a backend's, `403`, `404`...); `nil` when the backend answered.
    public var httpStatus: Int?
    /// When the outcome came back.
    public var completedAt: Date

    /// `Identifiable`: the idempotency key.
    public var id: String { key }

    /// True when the backend answered (``result`` holds its JSON).
    public var succeeded: Bool { error == nil }

    /// An outcome.
    public init(
        key: String, action: String, arguments: JSONValue, result: JSONValue?, error: ErrorBody?, httpStatus: Int? = nil, completedAt: Date
    ) {
        self.key = key
        self.action = action
        self.arguments = arguments
        self.result = result
        self.error = error
        self.httpStatus = httpStatus
        self.completedAt = completedAt
    }
}
