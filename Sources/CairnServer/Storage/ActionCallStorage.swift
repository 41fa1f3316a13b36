import Foundation

/// What the server keeps of action calls: each backend answer by project and idempotency key, so a call repeated
/// with the same key (a retried upload, a device that lost the answer) is answered again without calling the
/// backend twice. The rules on top live in `Integrations/Actions/`.
///
/// ```swift
/// if let stored = try await storage.actionCall(project: "field", idempotencyKey: key) { ... }   // replay
/// try await storage.recordActionCall(call)                                                    // first answer
/// ```
public protocol ActionCallStorage: Sendable {
    /// The stored outcome of the call with this key in `project`.
    func actionCall(project: String, idempotencyKey: String) async throws -> StoredActionCall?
    /// Stores an outcome; when the key is stored already (two calls raced), the first stays and is returned,
    /// else `call` is.
    func recordActionCall(_ call: StoredActionCall) async throws -> StoredActionCall
}
