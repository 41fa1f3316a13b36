import CairnProtocol
import Foundation
import GRDB

/// What applying one pulled page did.
struct AppliedPage: Sendable {
    var changes: Int
    var bytes: Int
    var hasMore: Bool
}

/// A pulled page, read and checked, ready to apply.
struct PulledPage: Sendable {
    var changes: [ScannedChange]
    var cursor: String
    var hasMore: Bool
    var bytes: Int
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

    /// Reads a pulled page (no database access: it may run while another page is being applied).
    func scan(_ body: Data, collection name: String) throws -> PulledPage {
        let fields = try collection(name).fields
        let page: ScannedPage
        do {
            page = try body.withUnsafeBytes { raw in try ScannedPage(bytes: raw.bindMemory(to: UInt8.self), fields: fields) }
        } catch {
            throw CairnError.badResponse("the changes page could not be read: \(error)", cause: error)
        }
        guard let cursor = page.cursor, let hasMore = page.hasMore else {
            throw CairnError.badResponse("a changes page needs changes, cursor and hasMore")
        }
        return PulledPage(changes: page.changes, cursor: cursor, hasMore: hasMore, bytes: body.count)
    }

    /// Applies a scanned page and its cursor in one transaction. Records with local changes keep showing them;
    /// only their server state moves on.
    func apply(_ page: PulledPage, collection name: String, now: Date = Date()) throws -> AppliedPage {
        let table = CollectionTable(schema: try collection(name))
        let cursor = page.cursor, hasMore = page.hasMore
        return try writeBookkeeping { db in
            let pendingIDs = Set(try String.fetchAll(db, sql: "SELECT record_id FROM cairn_shadow WHERE collection = ?", arguments: [name]))
            let upsert = try db.cachedStatement(sql: table.pulledUpsertSQL)
            let remove = try db.cachedStatement(sql: "DELETE FROM \(table.quotedName) WHERE id = ? AND cairn_pending = 0")
            let moveServerState = try db.cachedStatement(sql: """
                UPDATE cairn_shadow SET server_version = ?, server_data = ?, server_deleted = ?
                WHERE collection = ? AND record_id = ? AND coalesce(server_version, 0) <= ?
                """)
            for change in page.changes {
                if pendingIDs.contains(change.id) {
                    try moveServerState.execute(arguments: [
                        change.version, change.removed ? nil : change.dataText, change.removed, name, change.id, change.version,
                    ])
                } else if change.removed {
                    try remove.execute(arguments: [change.id])
                } else {
                    var arguments: [DatabaseValue] = [change.id.databaseValue]
                    arguments += table.columnValues(scanned: change.fields)
                    arguments += [(change.dataText ?? "{}").databaseValue, change.version.databaseValue, change.updatedAt.databaseValue,
                                  change.updatedBy.databaseValue]
                    try upsert.execute(arguments: StatementArguments(arguments))
                }
            }

            let resyncing = try Bool.fetchOne(db, sql: "SELECT resyncing FROM cairn_collections WHERE name = ?", arguments: [name]) ?? false
            if resyncing {
                let seen = try db.cachedStatement(sql: "INSERT OR IGNORE INTO cairn_resync (collection, record_id) VALUES (?, ?)")
                for change in page.changes where !change.removed { try seen.execute(arguments: [name, change.id]) }
                if !hasMore {
                    try finishResync(db, table: table)
                }
            }
            try db.execute(sql: """
                UPDATE cairn_collections SET cursor = ?, pulling = ?, needs_pull = CASE WHEN ? THEN needs_pull ELSE 0 END,
                       first_pull_done = CASE WHEN ? THEN first_pull_done ELSE 1 END, last_pull_at = ?
                WHERE name = ?
                """, arguments: [cursor, hasMore, hasMore, hasMore, now.timeIntervalSince1970, name])
            return AppliedPage(changes: page.changes.count, bytes: page.bytes, hasMore: hasMore)
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
