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
    static func sql(collection: String, id: String) -> String { sql(collection: collection, record: id) }

    /// The ids among `ids` of the records of `collection` that have local changes. Asks per record only when some
    /// record of the collection has local changes: a pull of a collection without any costs one statement.
    static func ids(_ db: Database, collection: String, among ids: some Sequence<String>) throws -> Set<String> {
        guard try Bool.fetchOne(db.cachedStatement(sql: anySQL), arguments: [collection]) == true else { return [] }
        let list = JSONValue.array(ids.map(JSONValue.string)).jsonText()
        return Set(try String.fetchAll(db.cachedStatement(sql: amongSQL), arguments: [list, collection]))
    }

    /// The rule, for the record `record` of `collection` (SQL expressions), or for any record of it when `record` is
    /// `nil`.
    private static func sql(collection: String, record: String?) -> String {
        let match = record.map { " AND record_id = \($0)" } ?? ""
        return "(EXISTS (SELECT 1 FROM cairn_queue WHERE collection = \(collection)\(match))"
            + " OR EXISTS (SELECT 1 FROM cairn_failed WHERE collection = \(collection)\(match)))"
    }

    /// Whether any record of collection `?1` has local changes.
    private static let anySQL = "SELECT \(sql(collection: "?1", record: nil))"

    /// The ids of a JSON array (`?1`) of records of collection `?2` that have local changes.
    private static let amongSQL = "SELECT value FROM json_each(?1) WHERE \(sql(collection: "?2", id: "value"))"
}
