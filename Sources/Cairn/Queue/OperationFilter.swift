import Foundation

/// Which queued or failed operations a list or a bulk action takes: by collection and record ids, upload group, custom
/// tag, change set and the records' data, in time order, at most `limit` of them.
///
/// ```swift
/// let stuck = try client.failedOperations(OperationFilter(collection: "inspections", newestFirst: true))
/// try client.discardFailed(OperationFilter(collection: "drafts"))          // all of them, in one transaction
/// try client.cancelPending(OperationFilter(collection: "notes", ids: ["n-1", "n-2"]))
/// let visit = try client.pendingOperations(OperationFilter(uploadGroup: "visit-118", where: .condition("severity", .gte, 3)))
/// ```
public struct OperationFilter: Sendable, Hashable {
    /// Only operations on this collection (all collections when nil).
    public var collection: String?
    /// Only operations on these record ids (all records when nil).
    public var ids: Set<String>?
    /// Only operations written in this upload group (``WriteOptions/uploadGroup``).
    public var uploadGroup: String?
    /// Only operations written with this custom tag (``WriteOptions/customTag``).
    public var customTag: String?
    /// Only operations of this change set (``PendingOperation/changeSet``).
    public var changeSet: String?
    /// Only operations whose record, as it shows on the device now, matches this filter (the protocol's filter
    /// language, as in ``Query``); a record deleted on the device matches none. With ``collection`` it is read in that
    /// collection; without, in the collection of each operation's record (one whose fields the filter does not name
    /// selects none; a filter that fits no collection is `validation_failed`).
    public var `where`: Filter?
    /// Newest first instead of oldest first (by when the change was made, or when it failed).
    public var newestFirst: Bool
    /// At most this many, after sorting (all when nil).
    public var limit: Int?

    /// A filter; the default takes every operation, oldest first.
    public init(
        collection: String? = nil, ids: Set<String>? = nil, uploadGroup: String? = nil, customTag: String? = nil, changeSet: String? = nil,
        where filter: Filter? = nil, newestFirst: Bool = false, limit: Int? = nil
    ) {
        self.collection = collection
        self.ids = ids
        self.uploadGroup = uploadGroup
        self.customTag = customTag
        self.changeSet = changeSet
        self.where = filter
        self.newestFirst = newestFirst
        self.limit = limit
    }

    /// Every operation, oldest first.
    public static let all = OperationFilter()

    /// The ids of the records that ``where`` selects on the device now, by collection: in ``collection``, or without
    /// one in every collection the filter fits; `nil` without a `where`.
    func matchingIDs(in store: LocalStore) throws -> [String: Set<String>]? {
        guard let filter = self.where else { return nil }
        if let collection { return [collection: Set(try store.records(Query(collection, filter: filter)).map(\.id))] }
        var matching: [String: Set<String>] = [:]
        var refusal: (any Error)?
        for name in store.schema?.collections.map(\.name) ?? [] {
            do {
                matching[name] = Set(try store.records(Query(name, filter: filter)).map(\.id))
            } catch let error as CairnError where error.code == .validationFailed || error.code == .invalidArgument {
                refusal = refusal ?? error  // the filter names fields this collection lacks: none of its records match
            }
        }
        if matching.isEmpty, let refusal { throw refusal }
        return matching
    }

    /// The facts of an operation the filter looks at.
    struct Facts {
        var collection: String
        var id: String
        var options: WriteOptions
        var changeSet: String?
    }

    /// The operations the filter selects from `operations` (oldest first), in its order and within its limit;
    /// `matching` holds the ids of the records ``where`` selects, by collection (read beforehand with ``matchingIDs(in:)``).
    func apply<Operation>(to operations: [Operation], matching: [String: Set<String>]?, facts: (Operation) -> Facts) -> [Operation] {
        var selected = operations.filter { operation in
            let facts = facts(operation)
            return (self.collection.map { $0 == facts.collection } ?? true) && (ids.map { $0.contains(facts.id) } ?? true)
                && (uploadGroup.map { $0 == facts.options.uploadGroup } ?? true) && (customTag.map { $0 == facts.options.customTag } ?? true)
                && (changeSet.map { $0 == facts.changeSet } ?? true) && (matching.map { $0[facts.collection]?.contains(facts.id) ?? false } ?? true)
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
