import CairnProtocol
import GRDB

/// The one rule of "this record has local changes": changes of it wait in the upload queue (`cairn_queue`) or are
/// kept as failed uploads (`cairn_failed`). Every path that must not lose a local change asks this rule, in SQL
/// (``sql(collection:id:)``) or in Swift (``ids(_:collection:among:)``): the pull writer, the acknowledgement of
/// uploads, the rows a fresh snapshot did not list, a tombstone's delete, and download-query eviction.
///
/// Two other traces follow this rule and are never read in its place:
/// - a record's shadow (`cairn_shadow`, its base and server states) is made with its first local change and dropped
///   when the rule stops holding;
/// - a row's `cairn_pending` column, the flag apps read as ``LocalRecord/hasPendingChanges``, is computed from
///   ``sql(collection:id:)`` by the statements that write rows.
///
/// ```swift
/// let kept = try LocalChanges.ids(db, collection: "notes", among: page.changes.map(\.id))
/// ```
enum LocalChanges {
    /// SQL, true when the record `id` of `collection` (SQL expressions) has local changes.
    static func sql(collection: String, id: String) -> String {
        "(EXISTS (SELECT 1 FROM cairn_queue WHERE collection = \(collection) AND record_id = \(id))"
            + " OR EXISTS (SELECT 1 FROM cairn_failed WHERE collection = \(collection) AND record_id = \(id)))"
    }

    /// The ids among `ids` of the records of `collection` that have local changes.
    static func ids(_ db: Database, collection: String, among ids: some Sequence<String>) throws -> Set<String> {
        let list = JSONValue.array(ids.map(JSONValue.string)).jsonText()
        return Set(try String.fetchAll(db.cachedStatement(sql: amongSQL), arguments: [list, collection]))
    }

    /// The ids of a JSON array (`?1`) of records of collection `?2` that have local changes.
    private static let amongSQL = "SELECT value FROM json_each(?1) WHERE \(sql(collection: "?2", id: "value"))"
}
