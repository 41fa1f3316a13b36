import Foundation

/// One record's state as the server committed it: live, or a tombstone when `deleted` is true.
///
/// ```swift
/// let note = Record(id: "n-1", version: 1042, data: ["title": "Buy milk"])
/// ```
public struct Record: Codable, Sendable, Hashable {
    /// The record's id, unique within its collection.
    public var id: String
    /// The project-wide change sequence number at which this state was committed.
    public var version: Int64
    /// When this state was committed.
    public var updatedAt: Date?
    /// The user who committed this state.
    public var updatedBy: String?
    /// True for a tombstone: the record was deleted at `version`.
    public var deleted: Bool
    /// The record's fields; empty for a tombstone.
    public var data: [String: JSONValue]

    /// Creates a record state; `deleted: true` with empty `data` is a tombstone.
    public init(
        id: String, version: Int64, updatedAt: Date? = nil, updatedBy: String? = nil, deleted: Bool = false,
        data: [String: JSONValue] = [:]
    ) {
        self.id = id
        self.version = version
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        self.deleted = deleted
        self.data = data
    }

    enum CodingKeys: String, CodingKey { case id, version, updatedAt, updatedBy, deleted, data }

    /// Decodes a record object of PROTOCOL.md; absent `deleted` reads as `false` and absent `data` as `[:]`, so a bare
    /// tombstone `{"id", "version", "deleted": true}` decodes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        version = try container.decode(Int64.self, forKey: .version)
        updatedAt = try container.decodeIfPresent(Date.self, forKey: .updatedAt)
        updatedBy = try container.decodeIfPresent(String.self, forKey: .updatedBy)
        deleted = try container.decodeIfPresent(Bool.self, forKey: .deleted) ?? false
        data = try container.decodeIfPresent([String: JSONValue].self, forKey: .data) ?? [:]
    }
}
