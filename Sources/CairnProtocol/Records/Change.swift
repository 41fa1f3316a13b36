import Foundation

/// One entry of a changes page: a record's latest state, a tombstone, or a `gone` marker for a record
/// that changed but no longer matches the pull's `where` filter.
public struct Change: Codable, Sendable, Hashable {
    /// The record's id.
    public var id: String
    /// The version of this change.
    public var version: Int64
    /// When the change was committed (absent on `gone` markers).
    public var updatedAt: Date?
    /// The username that committed it (absent on `gone` markers).
    public var updatedBy: String?
    /// True when the record was deleted.
    public var deleted: Bool
    /// True when the record still exists but left the pull's filter.
    public var gone: Bool
    /// The record's data for a live record.
    public var data: [String: JSONValue]?

    /// Creates a feed entry; a tombstone sets `deleted`, a `gone` marker sets `gone` and leaves the rest `nil`.
    public init(
        id: String, version: Int64, updatedAt: Date? = nil, updatedBy: String? = nil, deleted: Bool = false,
        gone: Bool = false, data: [String: JSONValue]? = nil
    ) {
        self.id = id
        self.version = version
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        self.deleted = deleted
        self.gone = gone
        self.data = data
    }

    /// The members of a change object: the one list the feed's writer and every reader go by. The writer puts them
    /// in this order (the order clients have always received) and switches over every case, so a new member is a
    /// compile error until each codec handles it.
    package enum CodingKeys: String, CodingKey, CaseIterable, Sendable { case id, version, gone, updatedAt, updatedBy, deleted, data }

    /// Decodes a change object of the feed; absent `deleted` and `gone` read as `false`, absent `data` as `nil`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        version = try container.decode(Int64.self, forKey: .version)
        updatedAt = try container.decodeIfPresent(Date.self, forKey: .updatedAt)
        updatedBy = try container.decodeIfPresent(String.self, forKey: .updatedBy)
        deleted = try container.decodeIfPresent(Bool.self, forKey: .deleted) ?? false
        gone = try container.decodeIfPresent(Bool.self, forKey: .gone) ?? false
        data = try container.decodeIfPresent([String: JSONValue].self, forKey: .data)
    }

    /// The live record this change carries, or `nil` for tombstones and `gone` markers.
    public var record: Record? {
        guard !deleted, !gone, let data else { return nil }
        return Record(id: id, version: version, updatedAt: updatedAt, updatedBy: updatedBy, data: data)
    }
}

/// A page of the changes feed: `GET .../collections/{collection}/changes`.
public struct ChangesPage: Codable, Sendable {
    /// The changes, in version order, at most one per id.
    public var changes: [Change]
    /// The opaque cursor to pass as `since` on the next call.
    public var cursor: String
    /// True when more changes wait after `cursor`.
    public var hasMore: Bool
    /// The schema version the server held when it answered.
    public var schemaVersion: String
    /// On a snapshot's first page only: how many records the snapshot holds.
    public var total: Int?
    /// The schema number the page's records are shaped for: the caller's `Cairn-Schema-Version` within the window,
    /// else the current one.
    public var schemaNumber: Int?

    /// Creates a page as the server answers a pull.
    public init(changes: [Change], cursor: String, hasMore: Bool, schemaVersion: String, total: Int? = nil, schemaNumber: Int? = nil) {
        self.schemaNumber = schemaNumber
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
        self.schemaVersion = schemaVersion
        self.total = total
    }
}
