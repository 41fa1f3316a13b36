import Foundation

/// What the next download will bring, asked of the server before any data flows (SAP's download time estimates):
/// how many records each collection not yet downloaded holds for this user, and the time they take at the rate the
/// last download measured (kept across relaunches).
///
/// ```swift
/// let estimate = try await client.estimateDownload()
/// if let time = estimate.timeNeeded { print("about \(time) for \(estimate.records) records") }
/// ```
public struct DownloadEstimate: Sendable, Hashable {
    /// The records of each collection or download query whose first download is still to come, as the server counts
    /// them now (with the user's data rules and the query's filter), by name.
    public var snapshots: [String: Int]
    /// The collections already downloaded: their next pull brings only what changed since, which the server does not
    /// count ahead.
    public var incremental: [String]
    /// The records per second the last download measured, if one did.
    public var perSecond: Double?

    /// The records of every snapshot to come (records that two download queries of one collection share count twice).
    public var records: Int { snapshots.values.reduce(0, +) }

    /// The time the snapshots take at ``perSecond``; nil before any download measured a rate.
    public var timeNeeded: Duration? {
        guard let perSecond, perSecond > 0 else { return nil }
        return .milliseconds(Int64((Double(records) / perSecond * 1000).rounded()))
    }

    /// An estimate of `snapshots` and `incremental` at `perSecond`.
    public init(snapshots: [String: Int], incremental: [String], perSecond: Double?) {
        self.snapshots = snapshots
        self.incremental = incremental
        self.perSecond = perSecond
    }
}
