import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    /// The change objects are built by SQLite's JSON functions inside the query, so a page of thousands of
    /// records never passes through a Swift JSON decoder or encoder.
    static let liveEntry =
        "json_object('id', id, 'version', version, 'updatedAt', updated_at, 'updatedBy', updated_by, 'deleted', json('false'), 'data', json(data))"
    static let tombstoneEntry =
        "json_object('id', id, 'version', version, 'updatedAt', updated_at, 'updatedBy', updated_by, 'deleted', json('true'))"
    static let goneEntry = "json_object('id', id, 'version', version, 'gone', json('true'))"

    public func changes(project: String, query: ChangesQuery) async throws -> ChangesRows {
        let filterSQL = query.filter?.sql ?? "1"
        let filterArguments = query.filter?.arguments.map(\.databaseValue) ?? []
        let entry = "CASE WHEN deleted = 1 THEN \(Self.tombstoneEntry) WHEN \(filterSQL) THEN \(Self.liveEntry) ELSE \(Self.goneEntry) END"
        var sql = "SELECT version, \(entry) FROM records WHERE project = ? AND collection = ? AND version > ?"
        // Placeholders in order: the filter inside the CASE, then the WHERE clause.
        var arguments = filterArguments + [project.databaseValue, query.collection.databaseValue, query.since.databaseValue]
        if let high = query.snapshotHigh {
            // A snapshot lists live matching records up to `high`, then every change after it.
            sql += " AND ((version <= ? AND deleted = 0 AND \(filterSQL)) OR version > ?)"
            arguments += [high.databaseValue] + filterArguments + [high.databaseValue]
        }
        sql += " ORDER BY version LIMIT ?"
        arguments.append((query.limit + 1).databaseValue)
        let statementArguments = StatementArguments(arguments)
        let statementSQL = sql
        return try await pool.read { db in
            var entries: [String] = []
            entries.reserveCapacity(query.limit)
            var lastVersion = query.since
            var hasMore = false
            let cursor = try Row.fetchCursor(db, sql: statementSQL, arguments: statementArguments)
            while let row = try cursor.next() {
                if entries.count == query.limit {
                    hasMore = true
                    break
                }
                lastVersion = row[0]
                entries.append(row[1])
            }
            let purged = try Int64.fetchOne(
                db, sql: "SELECT purged_through FROM collection_state WHERE project = ? AND collection = ?",
                arguments: [project, query.collection]) ?? 0
            let head = try Int64.fetchOne(db, sql: "SELECT head_version FROM projects WHERE name = ?", arguments: [project]) ?? 0
            return ChangesRows(entries: entries, lastVersion: lastVersion, hasMore: hasMore, purgedThrough: purged, head: head)
        }
    }

    public func liveVersions(project: String, collection: String) async throws -> (head: Int64, pairs: [(String, Int64)]) {
        try await pool.read { db in
            let head = try Int64.fetchOne(db, sql: "SELECT head_version FROM projects WHERE name = ?", arguments: [project]) ?? 0
            var pairs: [(String, Int64)] = []
            let rows = try Row.fetchCursor(
                db, sql: "SELECT id, version FROM records WHERE project = ? AND collection = ? AND deleted = 0 ORDER BY id",
                arguments: [project, collection])
            while let row = try rows.next() { pairs.append((row[0], row[1])) }
            return (head, pairs)
        }
    }
}
