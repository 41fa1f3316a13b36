import CairnProtocol
import Foundation
import GRDB

/// The log of conflicts and how they were resolved (`cairn_conflicts`).
struct ConflictTable: StoreTable {
    var tableNames: [String] { ["cairn_conflicts"] }

    /// Its part of the first migration.
    static func createV1(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_conflicts (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                collection TEXT NOT NULL,
                record_id TEXT NOT NULL,
                base TEXT,
                local TEXT,
                server TEXT,
                server_version INTEGER NOT NULL DEFAULT 0,
                resolution TEXT NOT NULL,
                resolved TEXT,
                resolved_at REAL NOT NULL
            )
            """)
    }

    /// Records that `conflict` ended as `resolution`, leaving the record as `resolved` (`nil`: deleted).
    func add(_ db: Database, _ conflict: Conflict, resolution: ResolutionKind, resolved: [String: JSONValue]?, at date: Date) throws {
        try db.execute(sql: """
            INSERT INTO cairn_conflicts (collection, record_id, base, local, server, server_version, resolution, resolved, resolved_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [conflict.collection, conflict.id, jsonText(conflict.base), jsonText(conflict.local), jsonText(conflict.server),
                             conflict.serverVersion, resolution.rawValue, jsonText(resolved), date.timeIntervalSince1970])
    }

    /// The newest `limit` conflicts, newest first.
    func entries(_ db: Database, limit: Int) throws -> [ConflictRecord] {
        try Row.fetchAll(db, sql: "SELECT * FROM cairn_conflicts ORDER BY id DESC LIMIT ?", arguments: [limit]).map { row throws in
            ConflictRecord(
                id: row["id"],
                conflict: Conflict(collection: row["collection"], id: row["record_id"], base: decodeObject(row["base"]),
                                   local: decodeObject(row["local"]), server: decodeObject(row["server"]), serverVersion: row["server_version"]),
                resolution: try StoredEnum.read(row["resolution"], column: "cairn_conflicts.resolution"), resolved: decodeObject(row["resolved"]),
                resolvedAt: Date(timeIntervalSince1970: row["resolved_at"]))
        }
    }
}
