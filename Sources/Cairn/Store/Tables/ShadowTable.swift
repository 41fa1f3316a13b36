import CairnProtocol
import Foundation
import GRDB

/// The server state a record's local changes were made on, and the latest server state known.
struct Shadow: Sendable, Hashable {
    var baseVersion: Int64?
    var baseData: [String: JSONValue]?
    var serverVersion: Int64?
    var serverData: [String: JSONValue]?
}

/// The shadows of the records that hold local changes (`cairn_shadow`): a record has one from its first local
/// change until ``LocalChanges`` no longer holds for it. Its states are data; whether a record has local changes is
/// asked of ``LocalChanges``, never read from here.
struct ShadowTable: StoreTable {
    var tableNames: [String] { ["cairn_shadow"] }

    /// Its part of the first migration.
    static func createV1(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_shadow (
                collection TEXT NOT NULL,
                record_id TEXT NOT NULL,
                base_version INTEGER,
                base_data TEXT,
                base_deleted INTEGER NOT NULL DEFAULT 1,
                server_version INTEGER,
                server_data TEXT,
                server_deleted INTEGER NOT NULL DEFAULT 1,
                PRIMARY KEY (collection, record_id)
            ) WITHOUT ROWID
            """)
    }

    /// A record's shadow, if it has local changes.
    func shadow(_ db: Database, collection: String, id: String) throws -> Shadow? {
        try Row.fetchOne(
            db.cachedStatement(sql: """
                SELECT base_version, base_data, base_deleted, server_version, server_data, server_deleted
                FROM cairn_shadow WHERE collection = ? AND record_id = ?
                """),
            arguments: [collection, id]
        ).map { row in
            let baseDeleted: Bool = row[2], serverDeleted: Bool = row[5]
            return Shadow(
                baseVersion: row[0], baseData: baseDeleted ? nil : decodeObject(row[1]),
                serverVersion: row[3], serverData: serverDeleted ? nil : decodeObject(row[4]))
        }
    }

    /// The base version of a record's local changes, without reading its states: `.some(nil)` when they were made
    /// on no server state, `nil` when the record has no shadow.
    func baseVersion(_ db: Database, collection: String, id: String) throws -> Int64?? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT base_version FROM cairn_shadow WHERE collection = ? AND record_id = ?"),
                         arguments: [collection, id]).map { $0[0] as Int64? }
    }

    /// The base version of a record's local changes; on its first local change, first records its current row
    /// (which shows the server's state then: `row`) as its shadow.
    func begin(_ db: Database, table: CollectionTable, id: String, row: RowState?) throws -> Int64? {
        if let base = try baseVersion(db, collection: table.name, id: id) { return base }
        // A row never uploaded (or none) holds no server state: the shadow is empty.
        if let row, row.version > 0,
            let version = try Int64.fetchOne(db.cachedStatement(sql: table.sql.beginShadow), arguments: [table.name, id])
        {
            return version
        }
        try save(db, Shadow(), collection: table.name, id: id)
        return nil
    }

    /// Writes a record's shadow.
    func save(_ db: Database, _ shadow: Shadow, collection: String, id: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO cairn_shadow (collection, record_id, base_version, base_data, base_deleted, server_version, server_data, server_deleted)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (collection, record_id) DO UPDATE SET base_version = excluded.base_version, base_data = excluded.base_data,
                base_deleted = excluded.base_deleted, server_version = excluded.server_version, server_data = excluded.server_data,
                server_deleted = excluded.server_deleted
                """
        ).execute(arguments: [collection, id, shadow.baseVersion, jsonText(shadow.baseData), shadow.baseData == nil,
                              shadow.serverVersion, jsonText(shadow.serverData), shadow.serverData == nil])
    }

    /// Forgets a record's shadow: nothing of it is pending any more.
    func remove(_ db: Database, collection: String, id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM cairn_shadow WHERE collection = ? AND record_id = ?").execute(arguments: [collection, id])
    }

    /// Forgets the shadows of these records in one statement.
    func remove(_ db: Database, collection: String, ids: [String]) throws {
        try db.cachedStatement(sql: "DELETE FROM cairn_shadow WHERE collection = ? AND record_id IN (SELECT value FROM json_each(?))")
            .execute(arguments: [collection, JSONValue.array(ids.map(JSONValue.string)).jsonText()])
    }

    /// Moves a record's latest known server state to a pulled change, unless a newer one is known already.
    func moveServerState(_ db: Database, collection: String, to change: ScannedChange) throws {
        try db.cachedStatement(sql: """
            UPDATE cairn_shadow SET server_version = ?, server_data = ?, server_deleted = ?
            WHERE collection = ? AND record_id = ? AND coalesce(server_version, 0) <= ?
            """).execute(arguments: [change.version, change.removed ? nil : change.dataText, change.removed, collection, change.id, change.version])
    }

    /// After a fresh snapshot: the records it did not list are gone from the server.
    func markServerDeleted(_ db: Database, collection: String, unlessListedIn listedIDs: String) throws {
        try db.execute(sql: """
            UPDATE cairn_shadow SET server_deleted = 1, server_data = NULL
            WHERE collection = ?1 AND record_id NOT IN (\(listedIDs))
            """, arguments: [collection])
    }
}
