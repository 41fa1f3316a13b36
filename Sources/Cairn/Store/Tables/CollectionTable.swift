import CairnProtocol
import Foundation
import GRDB

/// One collection's local table, named after the collection: a column per schema field, plus the full record JSON
/// and sync metadata. Its SQL is built once, when the schema is learnt.
///
/// | column | holds |
/// | --- | --- |
/// | `id` | the record id |
/// | one per field | strings, datetimes and file ids as TEXT, integers, numbers, booleans (1/0), json fields as JSON text |
/// | `cairn_data` | the record's whole data as JSON |
/// | `cairn_version` | the server version the row is based on (0 if never on the server) |
/// | `cairn_pending` | 1 while the record has local changes: computed from ``LocalChanges`` whenever the row is written |
/// | `cairn_updated_at`, `cairn_updated_by` | from the server's last state |
struct CollectionTable: StoreTable {
    /// The collection.
    let schema: CollectionSchema
    /// The table's name, quoted for SQL.
    let quotedName: String
    /// The table's statements.
    let sql: Statements
    /// The names of its `file` fields (most collections have none, and skip all file bookkeeping).
    let fileFields: [String]

    /// The collection's (and the table's) name.
    var name: String { schema.name }

    var tableNames: [String] { [schema.name] }

    /// True for an app's local-only collection: its writes are never queued for upload.
    let isLocalOnly: Bool

    init(schema: CollectionSchema, isLocalOnly: Bool = false) {
        self.schema = schema
        self.isLocalOnly = isLocalOnly
        quotedName = Self.quote(schema.name)
        sql = Statements(schema: schema, table: quotedName)
        fileFields = schema.fields.filter { $0.type == .file }.map(\.name)
    }

    /// Drops the table and its full-text index: the next schema may shape it differently.
    func wipe(_ db: Database) throws {
        try FullTextIndex.drop(db, collection: name)
        try db.execute(sql: "DROP TABLE IF EXISTS \(quotedName)")
    }

    /// Creates the table, or adds the columns of the fields it lacks (filled from the records' JSON), and its
    /// indexes; returns true when the table is new or gained fields.
    func migrate(_ db: Database) throws -> Bool {
        var changed = false
        if try !db.tableExists(name) {
            try db.execute(sql: createSQL)
            changed = true
        } else {
            let columns = Set(try db.columns(in: name).map(\.name))
            for field in schema.fields where !columns.contains(field.name) {
                try db.execute(sql: "ALTER TABLE \(quotedName) ADD COLUMN \(Self.quote(field.name)) \(Self.sqlType(field.type))")
                // Records already hold the new field in their JSON: fill the column from it.
                try db.execute(sql: "UPDATE \(quotedName) SET \(Self.quote(field.name)) = \(Self.extract(field, document: "cairn_data", path: "$"))")
                changed = true
            }
        }
        for fields in schema.indexes {
            let indexName = Self.quote("cairn_index_\(name)_" + fields.joined(separator: "_"))
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS \(indexName) ON \(quotedName) (\(fields.map(Self.quote).joined(separator: ", ")))")
        }
        return changed
    }

    private var createSQL: String {
        let fields = schema.fields.map { "\(Self.quote($0.name)) \(Self.sqlType($0.type))" }
        let columns = ["id TEXT PRIMARY KEY NOT NULL"] + fields + [
            "cairn_data TEXT NOT NULL", "cairn_version INTEGER NOT NULL DEFAULT 0", "cairn_pending INTEGER NOT NULL DEFAULT 0",
            "cairn_updated_at TEXT", "cairn_updated_by TEXT",
        ]
        return "CREATE TABLE IF NOT EXISTS \(quotedName) (\(columns.joined(separator: ", ")))"
    }

    /// SQL, the server version a pull brought into the shadow of the record `id` of `collection` (SQL expressions);
    /// 0 without one.
    static func shadowServerVersionSQL(collection: String, id: String) -> String {
        "coalesce((SELECT server_version FROM cairn_shadow WHERE collection = \(collection) AND record_id = \(id)), 0)"
    }

    /// The statements of one collection table, built once per schema.
    struct Statements: Sendable {
        /// Writes a whole row: id, fields, data, version, updatedAt, updatedBy; its pending flag is ``LocalChanges``.
        let upsert: String
        /// Writes a pulled record unless the row holds a newer version: id, fields, data, version, updatedAt, updatedBy.
        /// Its pending flag is 0: ``PulledChangeWriter`` writes rows only for records without local changes.
        let upsertPulled: String
        /// Reads a row's data, version, pending flag, updatedAt and updatedBy.
        let row: String
        /// Reads a row's version, updatedAt and updatedBy.
        let state: String
        /// Deletes a row.
        let delete: String
        /// Deletes a row unless the record has local changes (``LocalChanges``).
        let deleteSynced: String
        /// Copies a row that shows a server state into a new shadow: collection, id; returns the version.
        let beginShadow: String
        /// Marks rows uploaded exactly as they are, from a JSON array of `[id, version, updatedAt, updatedBy]` (`?1`) of
        /// the collection (`?2`), unless the record has other local changes (``LocalChanges``: its pending flag is
        /// then 0), or a pull brought a newer server state into its shadow; returns the ids it marked.
        let acknowledgeRows: String
        /// Marks one uploaded row committed, if its data is what the server committed (or `exact`).
        let acknowledgeRow: String
        /// Sets a row's server version and commit details, leaving its data and pending flag.
        let syncColumns: String
        /// After a fresh snapshot, deletes the rows it did not list, unless their records have local changes.
        let deleteUnlisted: String
        /// The `(id, version)` of each server state the replica holds (rows without local changes, and the shadows'
        /// server states).
        let serverStates: String

        init(schema: CollectionSchema, table: String) {
            let fields = schema.fields.map { CollectionTable.quote($0.name) }
            // The collection's name as an SQL string literal, for ``LocalChanges``.
            let collection = "'" + schema.name.replacingOccurrences(of: "'", with: "''") + "'"
            let written = ["id"] + fields + ["cairn_data", "cairn_version"]
            let columns = written + ["cairn_pending", "cairn_updated_at", "cairn_updated_by"]
            let values = (1...written.count).map { "?\($0)" } + [
                LocalChanges.sql(collection: collection, id: "?1"), "?\(written.count + 1)", "?\(written.count + 2)",
            ]
            upsert = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", "))) "
                + "ON CONFLICT (id) DO UPDATE SET " + columns.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            let pulled = ["id"] + fields + ["cairn_data", "cairn_version", "cairn_updated_at", "cairn_updated_by"]
            upsertPulled = "INSERT INTO \(table) (\(pulled.joined(separator: ", ")), cairn_pending) VALUES (\(Self.placeholders(pulled.count)), 0) "
                + "ON CONFLICT (id) DO UPDATE SET " + (pulled.dropFirst() + ["cairn_pending"]).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
                + " WHERE excluded.cairn_version >= \(table).cairn_version"
            row = "SELECT cairn_data, cairn_version, cairn_pending, cairn_updated_at, cairn_updated_by FROM \(table) WHERE id = ?"
            state = "SELECT cairn_version, cairn_updated_at, cairn_updated_by FROM \(table) WHERE id = ?"
            delete = "DELETE FROM \(table) WHERE id = ?"
            deleteSynced = "DELETE FROM \(table) WHERE id = ?1 AND NOT \(LocalChanges.sql(collection: collection, id: "?1"))"
            beginShadow = """
                INSERT INTO cairn_shadow (collection, record_id, base_version, base_data, base_deleted, server_version, server_data, server_deleted)
                SELECT ?1, id, cairn_version, cairn_data, 0, cairn_version, cairn_data, 0 FROM \(table) WHERE id = ?2 AND cairn_version > 0
                RETURNING base_version
                """
            acknowledgeRows = """
                UPDATE \(table) SET cairn_version = c.version, cairn_pending = 0, cairn_updated_at = c.at, cairn_updated_by = c.by
                FROM (SELECT value ->> '$[0]' AS id, value ->> '$[1]' AS version, value ->> '$[2]' AS at, value ->> '$[3]' AS by
                      FROM json_each(?1)) AS c
                WHERE \(table).id = c.id
                  AND NOT \(LocalChanges.sql(collection: "?2", id: "c.id"))
                  AND \(CollectionTable.shadowServerVersionSQL(collection: "?2", id: "c.id")) <= c.version
                RETURNING \(table).id
                """
            acknowledgeRow = """
                UPDATE \(table) SET cairn_version = ?1, cairn_pending = \(LocalChanges.sql(collection: collection, id: "?4")),
                       cairn_updated_at = ?2, cairn_updated_by = ?3
                WHERE id = ?4 AND (?5 OR cairn_data = ?6)
                """
            syncColumns = "UPDATE \(table) SET cairn_version = ?, cairn_updated_at = ?, cairn_updated_by = ? WHERE id = ?"
            deleteUnlisted = """
                DELETE FROM \(table) WHERE id NOT IN (\(CollectionStateTable.listedIDsSQL))
                  AND NOT \(LocalChanges.sql(collection: "?1", id: "\(table).id"))
                """
            serverStates = """
                SELECT id, cairn_version FROM \(table)
                WHERE id NOT IN (SELECT record_id FROM cairn_shadow WHERE collection = ?1)
                UNION ALL
                SELECT record_id, server_version FROM cairn_shadow WHERE collection = ?1 AND server_deleted = 0
                """
        }

        private static func placeholders(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ", ") }
    }
}
