import Foundation

/// The answer to `GET /v1/projects/{project}/operations/{opId}` (admins): what the server remembers of one uploaded
/// operation, for support. Kept as long as the server remembers opIds for replays (at least 24 hours).
///
/// ```swift
/// let entry = try CairnJSON.decode(OperationHistoryEntry.self, from: body)
/// print(entry.tag ?? "untagged", entry.result["status"] ?? "")
/// ```
public struct OperationHistoryEntry: Codable, Sendable, Hashable {
    /// The operation's opId.
    public var opId: String
    /// The tag the client gave it (``SyncOperation/tag``), if any.
    public var tag: String?
    /// When the server first answered it.
    public var createdAt: Date
    /// The answer it got, as a batch result (`status`, and `record`, `current` or `error`).
    public var result: JSONValue

    /// An entry with these values.
    public init(opId: String, tag: String?, createdAt: Date, result: JSONValue) {
        self.opId = opId
        self.tag = tag
        self.createdAt = createdAt
        self.result = result
    }
}
