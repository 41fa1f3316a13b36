/// A named set of collections and download queries that ``CairnClient/pull(group:)`` downloads together, with the
/// phase they take in automatic downloads (``CairnClient/sync()``, ``CairnClient/pull(_:)`` without collections,
/// the scheduler).
///
/// A member names a download query (``CairnClient/createDownloadQuery(name:collection:filter:prefetchFiles:)``, or
/// `cairn.configuration.COLLECTION` for ``CairnConfiguration/downloadFilters``), a collection, or another group
/// (SAP's nested download groups): a query pulls only its own records, a collection all of it (every query of a
/// partial collection), a group its members (which also take this group's phase). A name that is both a query and a
/// collection, or a group and either, and a group that contains itself through its members, are refused
/// (`invalid_argument`) when the groups are used.
///
/// ```swift
/// configuration.downloadGroups = [
///     "reference": DownloadGroup(members: ["products", "prices"], phase: 1),   // first
///     "today": DownloadGroup(members: ["open-jobs"], phase: 2),                 // a download query, then
///     "archive": DownloadGroup(members: ["old-jobs"], phase: 0),                // only by pull(group: "archive")
///     "work": ["tasks", "logs"],                                                // no phase: pull(group:) only names them
/// ]
/// ```
public struct DownloadGroup: Sendable, Hashable, ExpressibleByArrayLiteral {
    /// The download queries and collections of the group, by name.
    public var members: [String]
    /// The phase of the members in automatic downloads: phase 1 is pulled first, then 2, and so on (the same numbers
    /// as ``CairnConfiguration/downloadPhases``, whose first list is phase 1); 0 or below leaves the members out of
    /// automatic downloads (unless another group or ``CairnConfiguration/downloadPhases`` gives them a phase of 1 or
    /// more); `nil` gives them no phase.
    public var phase: Int?

    /// A group of `members`, in `phase`.
    public init(members: [String], phase: Int? = nil) {
        self.members = members
        self.phase = phase
    }

    /// A group without a phase: `["tasks", "logs"]`.
    public init(arrayLiteral members: String...) {
        self.init(members: members)
    }
}
