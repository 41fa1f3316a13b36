import CairnProtocol
import CairnSQL
import Foundation
import GRDB

extension SQLiteStorage {
    /// The live record's version and per-field versions; `nil` without a live record.
    public func fieldVersions(project: String, collection: String, id: String) async throws -> (version: Int64, fields: [String: Int64])? {
        let found = try await pool.read { db -> (Int64, String)? in
            try Row.fetchOne(
                db, sql: "SELECT version, field_versions FROM records WHERE project = ? AND collection = ? AND id = ? AND NOT deleted",
                arguments: [project, collection, id]
            ).map { ($0[0], $0[1]) }
        }
        guard let found else { return nil }
        return (found.0, try FieldVersionsColumn.decode(found.1))
    }

    /// Reads the rows (``FeedStatement``), `purged_through` and the head version in one WAL snapshot.
    public func feedRange(
        project: String, collection: CollectionSchema, since: Int64, snapshotHigh: Int64?, limit: Int, selection: FeedSelection
    ) async throws -> FeedRows {
        let statement = try FeedStatement(
            project: project, collection: collection, since: since, snapshotHigh: snapshotHigh, limit: limit, selection: selection,
            dialect: SQLiteRecordsDialect())
        let statementSQL = statement.sql
        let statementArguments = StatementArguments(statement.arguments.map(\.databaseValue))
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
            let marks = try Row.fetchOne(
                db, sql: "SELECT purged_through, history_through FROM collection_state WHERE project = ? AND collection = ?",
                arguments: [project, collection.name])
            return FeedRows(
                rows: rows, hasMore: hasMore, purgedThrough: marks?[0] ?? 0, head: try Self.headVersion(db, project: project),
                historyThrough: marks?[1] ?? 0)
        }
    }

    /// Reads the head version and the live records in one WAL snapshot; an unknown project has head 0 and no pairs.
    public func liveDigest(
        project: String, collection: CollectionSchema, filter: Filter?
    ) async throws -> (head: Int64, digest: CollectionDigest) {
        let matches = try Self.compile(filter, collection: collection, document: "data")
        let sql = "SELECT id, version FROM records WHERE project = ? AND collection = ? AND deleted = 0 AND \(matches.sql) ORDER BY id"
        let arguments = StatementArguments([project.databaseValue, collection.name.databaseValue] + matches.arguments)
        return try await pool.read { db in
            let head = try Self.headVersion(db, project: project)
            var digest = CollectionDigest.Builder()
            // TEXT's BINARY collation orders ids by their UTF-8 bytes, as the digest needs.
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() { digest.add(id: row[0], version: row[1]) }
            return (head, digest.digest)
        }
    }
}

extension SQLiteStorage {
    /// Counts the live matching rows, to `limit` at most (``LiveCountStatement``).
    public func liveCount(project: String, collection: CollectionSchema, filter: Filter?, limit: Int?) async throws -> Int {
        let statement = try LiveCountStatement(project: project, collection: collection, filter: filter, limit: limit, dialect: SQLiteRecordsDialect())
        let sql = statement.sql, arguments = StatementArguments(statement.arguments.map(\.databaseValue))
        return try await pool.read { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0 }
    }

    /// `filter` compiled over the JSON text in column `document` (`1` without a filter), with its arguments. A
    /// record's own `data` is read through `rule_data` first for the fields data rules compare (``RuleFields``).
    static func compile(_ filter: Filter?, collection: CollectionSchema, document: String) throws(ErrorBody) -> (sql: String, arguments: [DatabaseValue]) {
        guard let filter else { return ("1", []) }
        let compiled = try SQLiteRecordsDialect().compile(filter, collection: collection, document: document, firstPlaceholder: 1)
        return (compiled.sql, compiled.arguments.map(\.databaseValue))
    }

    /// Rewrites `rule_data` of a collection's live records for `fields` (the data rules changed what they read).
    public func refreshRuleData(project: String, collection: String, fields: [String]) async throws {
        let value = fields.isEmpty ? "NULL" : "json_object(" + fields.map { "'\($0)', json(data -> '$.\($0)')" }.joined(separator: ", ") + ")"
        try await write { db in
            try db.execute(
                sql: "UPDATE records SET rule_data = \(value) WHERE project = ? AND collection = ? AND deleted = 0",
                arguments: [project, collection])
        }
    }
}
