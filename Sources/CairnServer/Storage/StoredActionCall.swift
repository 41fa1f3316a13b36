import Foundation

/// The outcome of one action call as the server keeps it (`action_calls`), by project and idempotency key: a call
/// with the same key answers it again without calling the backend.
public struct StoredActionCall: Sendable, Hashable {
    /// The project the action belongs to.
    public var project: String
    /// The call's idempotency key.
    public var idempotencyKey: String
    /// The action's name.
    public var action: String
    /// The user who made the call.
    public var caller: String
    /// The backend's HTTP status: 2xx for an answer, anything else for a refusal.
    public var status: Int
    /// JSON text: the backend's answer for a 2xx status, else the error body the call was answered with.
    public var answer: String
    /// When the backend answered.
    public var completedAt: Date

    /// A stored call.
    public init(project: String, idempotencyKey: String, action: String, caller: String, status: Int, answer: String, completedAt: Date) {
        self.project = project
        self.idempotencyKey = idempotencyKey
        self.action = action
        self.caller = caller
        self.status = status
        self.answer = answer
        self.completedAt = completedAt
    }
}
