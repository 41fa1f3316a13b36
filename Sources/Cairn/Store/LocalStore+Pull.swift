import CairnProtocol
import Foundation
import GRDB

/// What applying one pulled page did.
struct AppliedPage: Sendable {
    var changes: Int
    var bytes: Int
    var hasMore: Bool
}

/// A collection's download state.
struct CollectionPullState: Sendable {
    var cursor: String?
    var firstPullDone: Bool
    var needsPull: Bool
    var pulling: Bool
    var resyncing: Bool
}

extension LocalStore {
    func pullState(_ collection: String) throws -> CollectionPullState {
        try writer.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM cairn_collections WHERE name = ?", arguments: [collection]) else {
                return CollectionPullState(cursor: nil, firstPullDone: false, needsPull: true, pulling: false, resyncing: false)
            }
            return CollectionPullState(cursor: row["cursor"], firstPullDone: row["first_pull_done"], needsPull: row["needs_pull"],
                                       pulling: row["pulling"], resyncing: row["resyncing"])
        }
    }

    /// Starts over with a snapshot after `410 cursor_expired`: local records absent from the snapshot are dropped
    /// when it completes (records with pending changes are kept).
    func beginResync(_ collection: String) throws {
        try writer.write { db in
            try db.execute(sql: "UPDATE cairn_collections SET cursor = NULL, resyncing = 1 WHERE name = ?", arguments: [collection])
            try db.execute(sql: "DELETE FROM cairn_resync WHERE collection = ?", arguments: [collection])
        }
    }

    /// Forgets a collection's cursor, so the next pull takes a fresh snapshot (when its download filter changed).
    func resetCursor(_ collection: String, filter: String?) throws {
        try writer.write { db in
            let previous = try String.fetchOne(db, sql: "SELECT filter FROM cairn_collections WHERE name = ?", arguments: [collection])
            guard previous != filter else { return }
            try db.execute(sql: "UPDATE cairn_collections SET cursor = NULL, resyncing = 1, filter = ? WHERE name = ?", arguments: [filter, collection])
            try db.execute(sql: "DELETE FROM cairn_resync WHERE collection = ?", arguments: [collection])
        }
    }

    /// Applies one page of the changes feed and its cursor in one transaction. The page is unpacked by SQLite's JSON
    /// functions: no record passes through a Swift decoder. Records with local changes keep showing them; only their
    /// server state moves on.
    func applyPage(_ body: Data, collection name: String, now: Date = Date()) throws -> AppliedPage {
        let table = CollectionTable(schema: try collection(name))
        let page = String(decoding: body, as: UTF8.self)
        return try writer.write { db in
            guard let header = try Row.fetchOne(db, sql: """
                SELECT json_valid(?1), json_type(?1, '$.changes'), json_type(?1, '$.cursor'), json_type(?1, '$.hasMore'),
                       json_extract(?1, '$.cursor'), json_array_length(?1, '$.changes')
                """, arguments: [page]),
                header[0] as Bool? == true, header[1] as String? == "array", header[2] as String? == "text",
                ["true", "false"].contains(header[3] as String? ?? "")
            else { throw CairnError.badResponse("a changes page needs changes, cursor and hasMore") }
            let hasMore = (header[3] as String?) == "true"
            let cursor: String = header[4]
            let count: Int = header[5]
            let malformed = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM json_each(?1, '$.changes')
                WHERE json_type(value, '$.id') IS NOT 'text' OR json_type(value, '$.version') IS NOT 'integer'
                   OR (coalesce(value ->> '$.deleted', 0) = 0 AND coalesce(value ->> '$.gone', 0) = 0 AND json_type(value, '$.data') IS NOT 'object')
                """, arguments: [page]) ?? 0
            guard malformed == 0 else { throw CairnError.badResponse("\(malformed) changes lack an id, a version or data") }

            let changes = """
                SELECT value ->> '$.id' AS id, value ->> '$.version' AS version, value -> '$.data' AS data,
                       (coalesce(value ->> '$.deleted', 0) OR coalesce(value ->> '$.gone', 0)) AS removed,
                       value ->> '$.updatedAt' AS updated_at, value ->> '$.updatedBy' AS updated_by, value
                FROM json_each(?1, '$.changes')
                """
            // Records with local changes: only their server state moves.
            try db.execute(sql: """
                UPDATE cairn_shadow SET server_version = c.version, server_data = CASE WHEN c.removed THEN NULL ELSE c.data END,
                       server_deleted = c.removed
                FROM (\(changes)) AS c
                WHERE cairn_shadow.collection = ?2 AND cairn_shadow.record_id = c.id AND c.version >= coalesce(cairn_shadow.server_version, 0)
                """, arguments: [page, name])
            try db.execute(sql: """
                DELETE FROM \(table.quotedName) WHERE cairn_pending = 0 AND id IN (SELECT id FROM (\(changes)) WHERE removed)
                """, arguments: [page])
            let fields = table.schema.fields
            let columns = ["id"] + fields.map { CollectionTable.quote($0.name) } + ["cairn_data", "cairn_version", "cairn_pending", "cairn_updated_at", "cairn_updated_by"]
            let values = ["c.id"] + fields.map { CollectionTable.extract($0, document: "c.value", path: "$.data") }
                + ["c.data", "c.version", "0", "c.updated_at", "c.updated_by"]
            try db.execute(sql: """
                INSERT INTO \(table.quotedName) (\(columns.joined(separator: ", ")))
                SELECT \(values.joined(separator: ", ")) FROM (\(changes)) AS c
                WHERE NOT c.removed AND NOT EXISTS (SELECT 1 FROM cairn_shadow WHERE collection = ?2 AND record_id = c.id)
                ON CONFLICT (id) DO UPDATE SET \(columns.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
                WHERE excluded.cairn_version >= \(table.quotedName).cairn_version
                """, arguments: [page, name])

            let resyncing = try Bool.fetchOne(db, sql: "SELECT resyncing FROM cairn_collections WHERE name = ?", arguments: [name]) ?? false
            if resyncing {
                try db.execute(sql: "INSERT OR IGNORE INTO cairn_resync (collection, record_id) SELECT ?2, id FROM (\(changes)) WHERE NOT removed",
                               arguments: [page, name])
                if !hasMore {
                    try finishResync(db, table: table)
                }
            }
            try db.execute(sql: """
                UPDATE cairn_collections SET cursor = ?, pulling = ?, needs_pull = CASE WHEN ? THEN needs_pull ELSE 0 END,
                       first_pull_done = CASE WHEN ? THEN first_pull_done ELSE 1 END, last_pull_at = ?
                WHERE name = ?
                """, arguments: [cursor, hasMore, hasMore, hasMore, now.timeIntervalSince1970, name])
            return AppliedPage(changes: count, bytes: body.count, hasMore: hasMore)
        }
    }

    /// After a fresh snapshot: drop the records it did not list, unless they hold local changes.
    private func finishResync(_ db: Database, table: CollectionTable) throws {
        try db.execute(sql: """
            DELETE FROM \(table.quotedName) WHERE cairn_pending = 0
              AND id NOT IN (SELECT record_id FROM cairn_resync WHERE collection = ?)
            """, arguments: [table.name])
        try db.execute(sql: """
            UPDATE cairn_shadow SET server_deleted = 1, server_data = NULL
            WHERE collection = ?1 AND record_id NOT IN (SELECT record_id FROM cairn_resync WHERE collection = ?1)
            """, arguments: [table.name])
        try db.execute(sql: "DELETE FROM cairn_resync WHERE collection = ?", arguments: [table.name])
        try db.execute(sql: "UPDATE cairn_collections SET resyncing = 0 WHERE name = ?", arguments: [table.name])
    }

    /// Notes that a pull of `collection` started (for `hasPendingDownload` after a crash).
    func markPulling(_ collection: String) throws {
        try writer.write { db in
            try db.execute(sql: "UPDATE cairn_collections SET pulling = 1 WHERE name = ?", arguments: [collection])
        }
    }

    /// The `(id, version)` pairs of the server states this replica holds, for ``CollectionDigest``.
    func serverPairs(_ collection: String) throws -> [(String, Int64)] {
        let table = CollectionTable(schema: try self.collection(collection))
        return try writer.read { db in
            var pairs: [(String, Int64)] = []
            let rows = try Row.fetchCursor(db, sql: """
                SELECT id, cairn_version FROM \(table.quotedName)
                WHERE id NOT IN (SELECT record_id FROM cairn_shadow WHERE collection = ?1)
                UNION ALL
                SELECT record_id, server_version FROM cairn_shadow WHERE collection = ?1 AND server_deleted = 0
                """, arguments: [collection])
            while let row = try rows.next() { pairs.append((row[0], row[1])) }
            return pairs
        }
    }
}
