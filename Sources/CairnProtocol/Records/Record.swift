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

    /// The members of a record object: the one list every reader and writer of the shape goes by. Writers put them
    /// in this order (sorted, as canonical JSON), and switch over every case, so a new member is a compile error
    /// until each codec handles it.
    package enum CodingKeys: String, CodingKey, CaseIterable, Sendable { case data, deleted, id, updatedAt, updatedBy, version }

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
