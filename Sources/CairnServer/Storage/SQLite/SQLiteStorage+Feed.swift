import CairnProtocol
import CairnSQL
import Foundation
import GRDB

extension SQLiteStorage {
    /// Reads the rows, `purged_through` and the head version in one WAL snapshot, with the filter compiled to SQLite
    /// JSON expressions; fetches `limit + 1` rows to learn `hasMore`.
    public func feedRange(
        project: String, collection: CollectionSchema, since: Int64, snapshotHigh: Int64?, limit: Int, filter: Filter?
    ) async throws -> FeedRows {
        let compiled = try filter.map { filter throws(ErrorBody) in
            try FilterSQL.compile(filter, collection: collection, dialect: .sqlite) { field in
                SQLiteDialect().jsonMember(field.name, of: "data")
            }
        }
        let filterSQL = compiled?.sql ?? "1"
        let filterArguments = compiled?.arguments.map(\.databaseValue) ?? []
        var sql = """
            SELECT id, version, updated_at, updated_by, deleted, data, \(filterSQL) FROM records
            WHERE project = ? AND collection = ? AND version > ?
            """
        // Placeholders in order: the filter in the select list, then the WHERE clause.
        var arguments = filterArguments + [project.databaseValue, collection.name.databaseValue, since.databaseValue]
        if let high = snapshotHigh {
            // Up to the snapshot's high mark only live matching records; every change after it.
            sql += " AND ((version <= ? AND deleted = 0 AND \(filterSQL)) OR version > ?)"
            arguments += [high.databaseValue] + filterArguments + [high.databaseValue]
        }
        sql += " ORDER BY version LIMIT ?"
        arguments.append((limit + 1).databaseValue)
        let statementSQL = sql
        let statementArguments = StatementArguments(arguments)
        return try await pool.read { db in
            var rows: [FeedRow] = []
            rows.reserveCapacity(min(limit, 10_000))
            var hasMore = false
            let cursor = try Row.fetchCursor(db, sql: statementSQL, arguments: statementArguments)
            while let row = try cursor.next() {
                if rows.count == limit {
                    hasMore = true
                    break
                }
                rows.append(FeedRow(
                    id: row[0], version: row[1], updatedAt: row[2], updatedBy: row[3], deleted: row[4], dataText: row[5],
                    matchesFilter: (row[6] as Bool?) ?? false))
            }
            let purged = try Int64.fetchOne(
                db, sql: "SELECT purged_through FROM collection_state WHERE project = ? AND collection = ?",
                arguments: [project, collection.name]) ?? 0
            return FeedRows(rows: rows, hasMore: hasMore, purgedThrough: purged, head: try Self.headVersion(db, project: project))
        }
    }

    /// Reads the head version and the live records in one WAL snapshot; an unknown project has head 0 and no pairs.
    public func liveVersions(project: String, collection: String) async throws -> (head: Int64, pairs: [(String, Int64)]) {
        try await pool.read { db in
            let head = try Self.headVersion(db, project: project)
            var pairs: [(String, Int64)] = []
            let rows = try Row.fetchCursor(
                db, sql: "SELECT id, version FROM records WHERE project = ? AND collection = ? AND deleted = 0 ORDER BY id",
                arguments: [project, collection])
            while let row = try rows.next() { pairs.append((row[0], row[1])) }
            return (head, pairs)
        }
    }
}
