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

    /// Reads the rows, `purged_through` and the head version in one WAL snapshot, with the selection's filters
    /// compiled to SQLite JSON expressions; fetches `limit + 1` rows to learn `hasMore`.
    public func feedRange(
        project: String, collection: CollectionSchema, since: Int64, snapshotHigh: Int64?, limit: Int, selection: FeedSelection
    ) async throws -> FeedRows {
        let matches = try Self.compile(selection.filter, collection: collection, document: "data")
        var sql = "SELECT id, version, updated_at, updated_by, deleted, data, \(matches.sql) FROM records"
        // Placeholders in the order they appear in the text.
        var arguments = matches.arguments
        sql += " WHERE project = ? AND collection = ? AND version > ?"
        arguments += [project.databaseValue, collection.name.databaseValue, since.databaseValue]
        // A change (a row after the window) the reader may not hold, and does not match, is left out.
        var change = "1"
        var changeArguments: [DatabaseValue] = []
        if let held = selection.held {
            // The state the reader's copy holds: the row's prior state when it is at or below `through`, else the
            // latest replaced state at or below it in the history (none: the record came later).
            let prior = try Self.compile(held.filter, collection: collection, document: "prior_data")
            let older = try Self.compile(held.filter, collection: collection, document: "held.data")
            let through = held.through.databaseValue
            change = """
                ((deleted = 0 AND \(matches.sql)) OR prior_version IS NULL
                 OR (prior_version > 0 AND prior_version <= ? AND prior_data IS NOT NULL AND \(prior.sql))
                 OR (prior_version > ? AND EXISTS (
                     SELECT 1 FROM (SELECT h.data FROM record_history h
                                    WHERE h.project = records.project AND h.collection = records.collection AND h.id = records.id
                                    AND h.version <= ? ORDER BY h.version DESC LIMIT 1) held
                     WHERE held.data IS NOT NULL AND \(older.sql))))
                """
            changeArguments = matches.arguments + [through] + prior.arguments + [through, through] + older.arguments
        }
        if let high = snapshotHigh {
            // Up to the snapshot's high mark only live records in the window; every change after it.
            let window = selection.window == nil ? matches : try Self.compile(selection.window, collection: collection, document: "data")
            sql += " AND ((version <= ? AND deleted = 0 AND \(window.sql)) OR (version > ? AND \(change)))"
            arguments += [high.databaseValue] + window.arguments + [high.databaseValue] + changeArguments
        } else {
            sql += " AND \(change)"
            arguments += changeArguments
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
            let marks = try Row.fetchOne(
                db, sql: "SELECT purged_through, history_through FROM collection_state WHERE project = ? AND collection = ?",
                arguments: [project, collection.name])
            return FeedRows(
                rows: rows, hasMore: hasMore, purgedThrough: marks?[0] ?? 0, head: try Self.headVersion(db, project: project),
                historyThrough: marks?[1] ?? 0)
        }
    }

    /// Reads the head version and the live records in one WAL snapshot; an unknown project has head 0 and no pairs.
    public func liveVersions(
        project: String, collection: CollectionSchema, filter: Filter?
    ) async throws -> (head: Int64, pairs: [(String, Int64)]) {
        let matches = try Self.compile(filter, collection: collection, document: "data")
        let sql = "SELECT id, version FROM records WHERE project = ? AND collection = ? AND deleted = 0 AND \(matches.sql) ORDER BY id"
        let arguments = StatementArguments([project.databaseValue, collection.name.databaseValue] + matches.arguments)
        return try await pool.read { db in
            let head = try Self.headVersion(db, project: project)
            var pairs: [(String, Int64)] = []
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() { pairs.append((row[0], row[1])) }
            return (head, pairs)
        }
    }
}

extension SQLiteStorage {
    /// Counts the live matching rows.
    public func liveCount(project: String, collection: CollectionSchema, filter: Filter?) async throws -> Int {
        let matches = try Self.compile(filter, collection: collection, document: "data")
        let sql = "SELECT COUNT(*) FROM records WHERE project = ? AND collection = ? AND deleted = 0 AND \(matches.sql)"
        let arguments = StatementArguments([project.databaseValue, collection.name.databaseValue] + matches.arguments)
        return try await pool.read { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0 }
    }

    /// Looks for one live matching row.
    public func containsLiveRecord(project: String, collection: CollectionSchema, matching filter: Filter) async throws -> Bool {
        let matches = try Self.compile(filter, collection: collection, document: "data")
        let sql = "SELECT 1 FROM records WHERE project = ? AND collection = ? AND deleted = 0 AND \(matches.sql) LIMIT 1"
        let arguments = StatementArguments([project.databaseValue, collection.name.databaseValue] + matches.arguments)
        return try await pool.read { db in try Bool.fetchOne(db, sql: sql, arguments: arguments) != nil }
    }

    /// `filter` compiled over the JSON text in column `document` (`1` without a filter), with its arguments. A
    /// record's own `data` is read through `rule_data` first for the fields data rules compare (``RuleFields``).
    static func compile(_ filter: Filter?, collection: CollectionSchema, document: String) throws(ErrorBody) -> (sql: String, arguments: [DatabaseValue]) {
        guard let filter else { return ("1", []) }
        let compiled = try FilterSQL.compile(
            filter, collection: collection, dialect: .sqlite,
            fieldExpression: RuleFields.reader(for: collection, document: document) { SQLiteDialect().jsonMember($0.name, of: $1) })
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
