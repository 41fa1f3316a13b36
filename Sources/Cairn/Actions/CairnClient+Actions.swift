import CairnProtocol
import Foundation

extension CairnClient {
    /// Calls an action of the project's schema now, through the server, and returns its backend's JSON answer. The
    /// server passes the arguments, who calls (user, role, claims, this device) and an idempotency key to the
    /// backend. Needs the network; for a call made offline, use ``enqueue(action:arguments:)``.
    ///
    /// ```swift
    /// let answer = try await client.call("closeJob", arguments: ["jobId": "j-7"])
    /// ```
    ///
    /// Throws `action_failed` when the backend refused (``CairnError/details`` hold its `status` and `body`) or gave no
    /// usable answer in time (``CairnError/isRetryable``), `forbidden` when the caller's role may not call it,
    /// `not_found` for an action the schema does not declare.
    public func call(_ action: String, arguments: JSONValue = .null) async throws -> JSONValue {
        try checkOpen()
        guard ActionSchema.isValidName(action) else { throw CairnError.invalid("\"\(action)\" is not a valid action name") }
        do {
            return try await api.callAction(
                action, arguments: arguments, idempotencyKey: UUID().uuidString.lowercased(), device: configuration.device
            ).result
        } catch {
            throw CairnError(wrapping: error)
        }
    }

    /// Queues a call of an action for the next sync, in order with the local writes: it is sent once every write made
    /// before it was uploaded, and writes made after it wait for its outcome. Returns its idempotency key: the call
    /// reaches the backend once, however often the upload is retried. The outcome lands in ``actionResults()``.
    ///
    /// ```swift
    /// try client.save("jobs", id: "j-7", data: ["status": "done"])
    /// let key = try await client.enqueue(action: "closeJob", arguments: ["jobId": "j-7"])
    /// try await client.sync()
    /// let outcome = try await client.actionResults().first { $0.key == key }
    /// ```
    @discardableResult
    public func enqueue(action: String, arguments: JSONValue = .null) async throws -> String {
        try checkOpen()
        let key = try store.actions.enqueue(action: action, arguments: arguments)
        noteLocalWrite()
        return key
    }

    /// The action calls queued on this device and not sent yet, oldest first.
    public func queuedActions() throws -> [QueuedAction] {
        try checkOpen()
        return try store.actions.queued()
    }

    /// Takes a queued action call out of the queue without sending it; false when no call with that key is queued
    /// (it may have been sent already: see ``actionResults()``).
    @discardableResult
    public func cancelQueuedAction(key: String) throws -> Bool {
        try checkOpen()
        return try store.actions.cancel(key: key)
    }

    /// The outcomes of the queued action calls a sync sent, oldest first: each backend's answer, or why the call was
    /// refused. They stay until removed with ``removeActionResults(keys:)``.
    public func actionResults() async throws -> [ActionResult] {
        try checkOpen()
        return try store.actions.results()
    }

    /// Forgets the outcomes with these keys (every outcome when `nil`); returns how many were removed.
    @discardableResult
    public func removeActionResults(keys: Set<String>? = nil) async throws -> Int {
        try checkOpen()
        return try store.actions.removeResults(keys: keys)
    }
}
