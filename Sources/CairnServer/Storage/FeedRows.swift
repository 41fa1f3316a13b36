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
    /// The highest version whose replaced states the purge removed from the history: a reader under data rules whose
    /// copy is older cannot be told what it holds, and its cursor expires.
    public var historyThrough: Int64

    /// A range of these rows.
    public init(rows: [FeedRow], hasMore: Bool, purgedThrough: Int64, head: Int64, historyThrough: Int64 = 0) {
        self.rows = rows
        self.hasMore = hasMore
        self.purgedThrough = purgedThrough
        self.head = head
        self.historyThrough = historyThrough
    }
}

/// Which rows a range of the feed lists (see ``ServerStorage/feedRange(project:collection:since:snapshotHigh:limit:selection:)``).
///
/// - A row after the snapshot's high mark (or after `since`, outside a snapshot) is a change: listed whole when
///   live and matching ``filter``; otherwise listed (as a tombstone, or `gone`) unless ``held`` says the reader
///   cannot hold it.
/// - A row at or below the high mark is listed when live and matching ``window`` (``filter`` when `nil`).
///
/// ```swift
/// FeedSelection(filter: downloadQuery)                                    // a pull with `where`
/// FeedSelection(filter: readable, held: FeedHolding(filter: readable, through: since))   // a pull bound by rules
/// ```
public struct FeedSelection: Sendable, Hashable {
    /// What the reader receives (its download query and read rule); `nil`: every record.
    public var filter: Filter?
    /// The rows at or below the snapshot's high mark to list, among live ones; `nil`: those matching ``filter``.
    public var window: Filter?
    /// When set, a change that does not match ``filter`` is listed only when the reader may hold the record.
    public var held: FeedHolding?

    /// A selection with these filters.
    public init(filter: Filter? = nil, window: Filter? = nil, held: FeedHolding? = nil) {
        self.filter = filter
        self.window = window
        self.held = held
    }
}

/// What a reader may hold of a record that changed: the state the record had at ``through`` (the row's prior state,
/// `prior_version` and `prior_data`, or an older one kept in `record_history`) if it matched ``filter``. A record
/// created after ``through`` is not held; one whose prior state is unknown (rows written before Cairn kept it) may be.
public struct FeedHolding: Sendable, Hashable {
    /// What the reader received up to ``through``; `nil`: every record.
    public var filter: Filter?
    /// The version the reader's copy is at.
    public var through: Int64

    /// A holding of these values.
    public init(filter: Filter?, through: Int64) {
        self.filter = filter
        self.through = through
    }
}
