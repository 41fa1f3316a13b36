import CairnProtocol

/// A local query: a collection, an optional filter in PROTOCOL.md's language, an optional full-text search, a sort
/// order and a limit. The same query reads records (``CairnClient/records(_:)``), counts them
/// (``CairnClient/count(_:)``) and observes them (``CairnClient/observe(_:)``).
///
/// ```swift
/// let open = Query("notes").filter(.condition("done", .eq, false)).sorted(by: "due").limit(50)
/// let records = try client.records(open)
/// let late = try client.count(Query("notes").filter(\Note.due < Date()))
/// let hits = try client.records(Query("notes").matching("fire exit"))   // ranked, best first
/// ```
public struct Query: Sendable, Hashable {
    /// A sort key: a schema field (or `id`) and a direction.
    public struct SortKey: Sendable, Hashable {
        /// A schema field or `id`.
        public var field: String
        /// Ascending (the default) or descending.
        public var ascending: Bool

        /// Sorts by `field`, ascending unless told otherwise.
        public init(_ field: String, ascending: Bool = true) {
            self.field = field
            self.ascending = ascending
        }
    }

    /// The collection queried.
    public var collection: String
    /// The filter, in PROTOCOL.md's language; `nil` selects every record.
    public var filter: Filter?
    /// Sort keys, applied in order; ties are broken by `id`.
    public var sort: [SortKey]
    /// The most records to return.
    public var limit: Int?
    /// How many records to skip first (with `limit`).
    public var offset: Int?
    /// Words to find with the collection's full-text index (``CairnClient/enableFullTextSearch(in:fields:)``);
    /// results come best match first, then in ``sort`` order.
    public var search: String?

    /// A query of `collection`; the builder methods (`filter`, `sorted(by:)`, `limit`) read better in most code.
    public init(_ collection: String, filter: Filter? = nil, sort: [SortKey] = [], limit: Int? = nil, offset: Int? = nil) {
        self.collection = collection
        self.filter = filter
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }

    /// This query with `filter` (joined with AND to any filter already set).
    public func filter(_ filter: Filter) -> Query {
        var copy = self
        copy.filter = self.filter.map { .and([$0, filter]) } ?? filter
        return copy
    }

    /// This query sorted by `field` after any sort already set.
    public func sorted(by field: String, ascending: Bool = true) -> Query {
        var copy = self
        copy.sort.append(SortKey(field, ascending: ascending))
        return copy
    }

    /// This query keeping only records whose full-text fields hold every word of `text` (the last word also as a
    /// prefix, for search as you type), best match first.
    public func matching(_ text: String) -> Query {
        var copy = self
        copy.search = text
        return copy
    }

    /// This query returning at most `count` records, skipping `offset`.
    public func limit(_ count: Int, offset: Int? = nil) -> Query {
        var copy = self
        copy.limit = count
        copy.offset = offset
        return copy
    }
}
