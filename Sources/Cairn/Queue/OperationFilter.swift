import Foundation

/// Which queued or failed operations a list or a bulk action takes: by collection and record ids, in time order, at
/// most `limit` of them.
///
/// ```swift
/// let stuck = try client.failedOperations(OperationFilter(collection: "inspections", newestFirst: true))
/// try client.discardFailed(OperationFilter(collection: "drafts"))          // all of them, in one transaction
/// try client.cancelPending(OperationFilter(collection: "notes", ids: ["n-1", "n-2"]))
/// ```
public struct OperationFilter: Sendable, Hashable {
    /// Only operations on this collection (all collections when nil).
    public var collection: String?
    /// Only operations on these record ids (all records when nil).
    public var ids: Set<String>?
    /// Newest first instead of oldest first (by when the change was made, or when it failed).
    public var newestFirst: Bool
    /// At most this many, after sorting (all when nil).
    public var limit: Int?

    /// A filter; the default takes every operation, oldest first.
    public init(collection: String? = nil, ids: Set<String>? = nil, newestFirst: Bool = false, limit: Int? = nil) {
        self.collection = collection
        self.ids = ids
        self.newestFirst = newestFirst
        self.limit = limit
    }

    /// Every operation, oldest first.
    public static let all = OperationFilter()

    /// The operations the filter selects from `operations` (oldest first), in its order and within its limit.
    func apply<Operation>(
        to operations: [Operation], collection: (Operation) -> String, id: (Operation) -> String
    ) -> [Operation] {
        var selected = operations.filter { operation in
            (self.collection.map { $0 == collection(operation) } ?? true) && (ids.map { $0.contains(id(operation)) } ?? true)
        }
        if newestFirst { selected.reverse() }
        if let limit { selected = Array(selected.prefix(max(0, limit))) }
        return selected
    }
}

/// Which sync runs ``CairnClient/history(matching:)`` returns.
///
/// ```swift
/// let failures = try client.history(matching: HistoryFilter(since: Date().addingTimeInterval(-86_400), failedOnly: true))
/// ```
public struct HistoryFilter: Sendable, Hashable {
    /// Only runs of these kinds (all when nil).
    public var kinds: Set<SyncKind>?
    /// Only runs that started at or after this time.
    public var since: Date?
    /// Only runs that started before this time.
    public var until: Date?
    /// Only runs that ended with an error.
    public var failedOnly: Bool

    /// A filter; the default takes every run the history keeps.
    public init(kinds: Set<SyncKind>? = nil, since: Date? = nil, until: Date? = nil, failedOnly: Bool = false) {
        self.kinds = kinds
        self.since = since
        self.until = until
        self.failedOnly = failedOnly
    }

    func matches(_ entry: SyncHistoryEntry) -> Bool {
        (kinds.map { $0.contains(entry.kind) } ?? true) && (since.map { entry.startedAt >= $0 } ?? true)
            && (until.map { entry.startedAt < $0 } ?? true) && (!failedOnly || entry.error != nil)
    }
}
