/// Which tombstones and replaced states a purge deletes, written once for every backend (each runs the fragments in
/// its own transaction, with its own placeholders): those older than the horizon, unless a client seen within twice
/// the retention (``ServerStorage/holdersSeenSince(tombstonesBefore:now:)``) has not pulled past them yet (so a
/// device away longer than the retention, but not twice as long, still pulls deltas), or a webhook has not delivered.
///
/// ```swift
/// let holds = PurgeRules.holds(seenSince: "?")   // CREATE TEMP TABLE purge_holds AS <holds>
/// let gone = PurgeRules.tombstones(before: "?", holds: "purge_holds", isDeleted: "deleted = 1")
/// ```
enum PurgeRules {
    /// Per project, the lowest version a client seen since `seenSince` pulled to, or a webhook delivered through
    /// (columns `project, pulled`): what lies above it stays. A client that never pulled to the end (at 0) holds
    /// nothing: it starts with a snapshot. A webhook holds from its cursor however long it fails: it keeps its place
    /// and delivers every deletion.
    static func holds(seenSince: String) -> String {
        """
        SELECT project, min(pulled) AS pulled FROM (
            SELECT project, last_pulled_version AS pulled FROM clients WHERE last_seen >= \(seenSince) AND last_pulled_version > 0
            UNION ALL SELECT project, cursor AS pulled FROM webhooks
        ) AS holders GROUP BY project
        """
    }

    /// The rows of `records` to purge: tombstones (`isDeleted`, as the backend's tombstone index spells it) changed
    /// before `horizon` and pulled past by every holder in `holds` (a table of ``holds(seenSince:)``).
    static func tombstones(before horizon: String, holds: String, isDeleted: String) -> String {
        """
        \(isDeleted) AND changed_at < \(horizon)
        AND NOT EXISTS (SELECT 1 FROM \(holds) WHERE \(holds).project = records.project AND records.version > \(holds).pulled)
        """
    }

    /// The rows of `record_history` to purge: replaced states, by the same rule measured from when they were replaced.
    static func replacedStates(before horizon: String, holds: String) -> String {
        """
        superseded_at < \(horizon)
        AND NOT EXISTS (
            SELECT 1 FROM \(holds) WHERE \(holds).project = record_history.project AND record_history.superseded_version > \(holds).pulled)
        """
    }
}
