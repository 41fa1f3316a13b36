import CairnProtocol
import Foundation
import GRDB

/// Action calls on the device: the calls queued for upload (``QueuedActionTable``), in order with the record
/// writes, and their outcomes once sent (``ActionResultTable``). A call leaves the queue in the transaction that
/// stores its outcome, so a call is either queued or answered, never both nor neither.
///
/// ```swift
/// let key = try store.actions.enqueue(action: "closeJob", arguments: ["jobId": "j-7"])
/// if let call = try store.actions.takeReady() { ... }   // once the writes before it are acknowledged
/// ```
struct LocalActions: Sendable {
    /// The store the queue and the outcomes live in.
    let store: LocalStore

    /// Queues a call after every write queued so far; returns its idempotency key (a new UUID).
    func enqueue(action: String, arguments: JSONValue) throws -> String {
        guard ActionSchema.isValidName(action) else { throw CairnError.invalid("\"\(action)\" is not a valid action name") }
        let key = UUID().uuidString.lowercased()
        let date = store.now
        try store.writer.write { db in try store.queuedActions.insert(db, key: key, action: action, arguments: arguments, at: date) }
        return key
    }

    /// The oldest queued call when every write queued before it has been acknowledged; counts an attempt.
    func takeReady() throws -> QueuedAction? {
        try store.writeBookkeeping { db in try store.queuedActions.takeReady(db) }
    }

    /// Stores the outcome of a queued call and takes the call out of the queue, in one transaction.
    func complete(_ call: QueuedAction, result: JSONValue?, error: CairnError?) throws {
        // Spelled out: JSONValue takes `nil` as its own `null`, which would give a refused call a result.
        let answer: JSONValue? = if error == nil { .some(result ?? .null) } else { .none }
        let outcome = ActionResult(
            key: call.key, action: call.action, arguments: call.arguments, result: answer,
            error: error.map { ErrorBody(code: $0.code, message: $0.message, details: $0.details) }, httpStatus: error?.httpStatus,
            completedAt: store.now)
        try store.writer.write { db in
            try store.actionResults.save(db, outcome)
            try store.queuedActions.remove(db, key: call.key)
        }
    }

    /// The calls waiting for upload, oldest first.
    func queued() throws -> [QueuedAction] {
        try store.writer.read { db in try store.queuedActions.all(db) }
    }

    /// Takes a queued call out of the queue without sending it; true when it was queued.
    func cancel(key: String) throws -> Bool {
        try store.writer.write { db in try store.queuedActions.remove(db, key: key) }
    }

    /// The outcomes of sent calls, oldest first.
    func results() throws -> [ActionResult] {
        try store.writer.read { db in try store.actionResults.all(db) }
    }

    /// Forgets the outcomes with these keys (every one when `nil`); returns how many went.
    func removeResults(keys: Set<String>?) throws -> Int {
        try store.writer.write { db in try store.actionResults.remove(db, keys: keys) }
    }
}
