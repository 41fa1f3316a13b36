/// One row of a feed range: a record's state, and whether it matches the range's filter.
public struct FeedRow: Sendable, Hashable {
    /// The record's id within the collection.
    public var id: String
    /// The project-wide version at which this state was committed; rows come in this order.
    public var version: Int64
    /// RFC 3339 text, as stored.
    public var updatedAt: String
    /// The user who committed this state.
    public var updatedBy: String
    /// True for a tombstone: answered as `"deleted": true` with no `data`.
    public var deleted: Bool
    /// The data as stored JSON object text (`{}` for tombstones).
    public var dataText: String
    /// True when the record matches the filter (always, without one).
    public var matchesFilter: Bool

    /// A row with these values.
    public init(
        id: String, version: Int64, updatedAt: String, updatedBy: String, deleted: Bool, dataText: String, matchesFilter: Bool
    ) {
        self.id = id
        self.version = version
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        self.deleted = deleted
        self.dataText = dataText
        self.matchesFilter = matchesFilter
    }
}

/// A range of the changes feed, read in one snapshot (see ``ServerStorage/feedRange(project:collection:since:snapshotHigh:limit:filter:)``).
public struct FeedRows: Sendable {
    /// At most `limit` rows, in version order.
    public var rows: [FeedRow]
    /// True when more rows follow the last one.
    public var hasMore: Bool
    /// The highest tombstone version purged from the collection (0 when none was): cursors below it expired.
    public var purgedThrough: Int64
    /// The project's head version in the same snapshot.
    public var head: Int64

    /// A range of these rows.
    public init(rows: [FeedRow], hasMore: Bool, purgedThrough: Int64, head: Int64) {
        self.rows = rows
        self.hasMore = hasMore
        self.purgedThrough = purgedThrough
        self.head = head
    }
}
