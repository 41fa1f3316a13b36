import CairnProtocol
import CairnSQL

/// One page of a collection's changes feed as a query of `records`, written once for every backend: the rows after
/// `since` in version order (`limit + 1` of them, to learn whether more follow), each with whether it matches the
/// selection's filter; and, under data rules, only the rows the reader may see. A backend runs it inside its own
/// statement or snapshot, beside the head version and the collection's marks.
///
/// What a reader sees of the rows after `since` (the visibility rule):
/// - up to the snapshot's high mark (a first sync in progress), the live records in its window;
/// - after it, every change that matches the reader's filter, and a change that does not only when the reader may
///   hold the record: the state the reader's copy is at (``FeedHolding/through``) matched what it received then, or
///   that state is unknown (rows written before Cairn kept it). That change reaches the reader as gone.
///
/// ```swift
/// let page = try FeedStatement(project: "field", collection: jobs, since: 0, snapshotHigh: nil, limit: 500,
///                              selection: FeedSelection(filter: readRule), dialect: SQLiteRecordsDialect())
/// // page.sql: SELECT id, version, updated_at, updated_by, deleted, data, (...) AS matches FROM records WHERE ...
/// ```
struct FeedStatement: Sendable {
    /// The query; its columns are `id, version, updated_at, updated_by, deleted, data, matches`.
    let sql: String
    /// Its arguments, in placeholder order.
    let arguments: [SQLArgument]

    /// The page's query in `dialect`.
    init<Dialect: RecordsDialect>(
        project: String, collection: CollectionSchema, since: Int64, snapshotHigh: Int64?, limit: Int, selection: FeedSelection,
        dialect: Dialect
    ) throws(ErrorBody) {
        var builder = RecordsStatementBuilder(dialect, collection: collection)
        let matches = try builder.filter(selection.filter, document: "data")
        var sql = """
            SELECT id, version, updated_at, updated_by, deleted, data, (\(matches)) AS matches FROM records
            WHERE project = \(builder.bind(.text(project))) AND collection = \(builder.bind(.text(collection.name))) \
            AND version > \(builder.bind(.integer(since)))
            """
        if let high = snapshotHigh {
            // Up to the snapshot's high mark only live records in the window; every change after it.
            let atOrBelow = builder.bind(.integer(high))
            let window = try builder.filter(selection.window ?? selection.filter, document: "data")
            let above = builder.bind(.integer(high))
            sql += " AND ((version <= \(atOrBelow) AND NOT deleted AND \(window)) OR (version > \(above) AND \(try Self.change(selection, &builder))))"
        } else {
            sql += " AND \(try Self.change(selection, &builder))"
        }
        sql += " ORDER BY version LIMIT \(builder.bind(.integer(Int64(limit) + 1)))"
        self.sql = sql
        self.arguments = builder.arguments
    }

    /// Which changes the reader receives: all of them without a holding; else those matching its filter, and the
    /// others only when it may hold the record (see the type's description).
    private static func change<Dialect>(_ selection: FeedSelection, _ builder: inout RecordsStatementBuilder<Dialect>) throws(ErrorBody) -> String {
        guard let held = selection.held else { return builder.dialect.alwaysTrue }
        let live = try builder.filter(selection.filter, document: "data")
        let priorThrough = builder.bind(.integer(held.through))
        // A rule that follows a reference (``FollowedReference``) reads the referenced record as of the held state.
        let prior = try builder.filter(held.filter, document: "prior_data", asOf: "records.prior_version")
        let replacedAfter = builder.bind(.integer(held.through))
        let historyThrough = builder.bind(.integer(held.through))
        let older = try builder.filter(held.filter, document: "held.data", asOf: "held.version")
        // The state the reader's copy holds: the row's prior state when it is at or below `through`, else the latest
        // replaced state at or below it in the history (none: the record came later).
        return """
            ((NOT deleted AND \(live)) OR prior_version IS NULL
             OR (prior_version > 0 AND prior_version <= \(priorThrough) AND prior_data IS NOT NULL AND \(prior))
             OR (prior_version > \(replacedAfter) AND EXISTS (
                 SELECT 1 FROM (SELECT h.data, h.version FROM record_history h
                                WHERE h.project = records.project AND h.collection = records.collection AND h.id = records.id
                                AND h.version <= \(historyThrough) ORDER BY h.version DESC LIMIT 1) held
                 WHERE held.data IS NOT NULL AND \(older))))
            """
    }
}
