/// What a record's row keeps of the state a change replaced, so the feed can tell whether a reader may hold the
/// record (see ``FeedHolding``): `prior_version` is the replaced state's version (0 when there was none; `NULL` for
/// rows written before Cairn kept it), `prior_data` its data (`NULL` when it was a tombstone). Older replaced states
/// are in `record_history`.
enum RecordPriorState {
    /// The `SET` assignments of the records upsert's update branch, the same SQL on every backend: the right-hand
    /// sides read the row as it was before the update.
    static let assignments = """
        prior_version = records.version,
        prior_data = CASE WHEN records.deleted THEN NULL ELSE records.data END
        """
}
