import CairnProtocol
import CairnSQL
import Foundation
import PostgresNIO

extension PostgresStorage {
    /// The live record's version and per-field versions; `nil` without a live record.
    public func fieldVersions(project: String, collection: String, id: String) async throws -> (version: Int64, fields: [String: Int64])? {
        guard !Self.holdsNUL(project, collection, id) else { return nil }
        let rows = try await client.query(
            """
            SELECT version, field_versions FROM records
            WHERE project = \(project) AND collection = \(collection) AND id = \(id) AND NOT deleted
            """, logger: logger)
        for try await (version, fields) in rows.decode((Int64, String).self) { return (version, try FieldVersionsColumn.decode(fields)) }
        return nil
    }

    /// Reads the rows, `purged_through` and the head version in one statement (one snapshot), with the selection's
    /// filters compiled by ``PostgresDialect``; fetches `limit + 1` rows to learn `hasMore`.
    public func feedRange(
        project: String, collection: CollectionSchema, since: Int64, snapshotHigh: Int64?, limit: Int, selection: FeedSelection
    ) async throws -> FeedRows {
        // $1 project, $2 collection, $3 since, $4 high mark, $5 limit, $6 the held-through version; the filters'
        // arguments from $7 on. Numbered placeholders let a filter appear twice with one set of arguments.
        var binds = PostgresBindings()
        binds.append(project)
        binds.append(collection.name)
        binds.append(since)
        binds.append(snapshotHigh ?? 0)
        binds.append(Int64(limit) + 1)
        binds.append(selection.held?.through ?? 0)
        let filterSQL = try Self.compile(selection.filter, collection: collection, document: "data", into: &binds)
        var change = "true"
        if let held = selection.held {
            // The state the reader's copy holds: the row's prior state when it is at or below `through` ($6), else the
            // latest replaced state at or below it in the history (none: the record came later).
            let prior = try Self.compile(held.filter, collection: collection, document: "prior_data", into: &binds)
            let older = try Self.compile(held.filter, collection: collection, document: "held.data", into: &binds)
            change = """
                ((NOT deleted AND \(filterSQL)) OR prior_version IS NULL
                 OR (prior_version > 0 AND prior_version <= $6 AND prior_data IS NOT NULL AND \(prior))
                 OR (prior_version > $6 AND EXISTS (
                     SELECT 1 FROM (SELECT h.data FROM record_history h
                                    WHERE h.project = records.project AND h.collection = records.collection AND h.id = records.id
                                    AND h.version <= $6 ORDER BY h.version DESC LIMIT 1) held
                     WHERE held.data IS NOT NULL AND \(older))))
                """
        }
        var window = " AND \(change)"
        if snapshotHigh != nil {
            let windowSQL = selection.window == nil ? filterSQL : try Self.compile(selection.window, collection: collection, document: "data", into: &binds)
            window = " AND ((version <= $4 AND NOT deleted AND \(windowSQL)) OR (version > $4 AND \(change)))"
        }
        let sql = """
            SELECT state.head, state.purged, state.history, r.id, r.version, r.updated_at, r.updated_by, r.deleted, r.data, r.matches
            FROM (SELECT coalesce((SELECT head_version FROM projects WHERE name = $1), 0) AS head,
                         coalesce((SELECT purged_through FROM collection_state WHERE project = $1 AND collection = $2), 0) AS purged,
                         coalesce((SELECT history_through FROM collection_state WHERE project = $1 AND collection = $2), 0) AS history) state
            LEFT JOIN LATERAL (
                SELECT id, version, updated_at, updated_by, deleted, data, (\(filterSQL)) AS matches FROM records
                WHERE project = $1 AND collection = $2 AND version > $3\(window)
                ORDER BY version LIMIT $5
            ) r ON true
            ORDER BY r.version
            """
        let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        var feed = FeedRows(rows: [], hasMore: false, purgedThrough: 0, head: 0)
        feed.rows.reserveCapacity(min(limit, 10_000))
        for try await (head, purged, history, id, version, updatedAt, updatedBy, deleted, data, matches)
            in rows.decode((Int64, Int64, Int64, String?, Int64?, String?, String?, Bool?, String?, Bool?).self)
        {
            feed.head = head
            feed.purgedThrough = purged
            feed.historyThrough = history
            guard let id, let version, let updatedAt, let updatedBy, let deleted, let data else { continue }
            if feed.rows.count == limit {
                feed.hasMore = true
                continue
            }
            feed.rows.append(FeedRow(
                id: id, version: version, updatedAt: updatedAt, updatedBy: updatedBy, deleted: deleted, dataText: data,
                matchesFilter: matches ?? false))
        }
        return feed
    }

    /// Reads the head version and the live records in one statement; an unknown project has head 0 and no pairs.
    /// Ids are ordered by bytes (`COLLATE "C"`), as on SQLite.
    public func liveVersions(
        project: String, collection: CollectionSchema, filter: Filter?
    ) async throws -> (head: Int64, pairs: [(String, Int64)]) {
        var binds = PostgresBindings()
        binds.append(project)
        binds.append(collection.name)
        let filterSQL = try Self.compile(filter, collection: collection, document: "data", into: &binds)
        let sql = """
            SELECT state.head, r.id, r.version
            FROM (SELECT coalesce((SELECT head_version FROM projects WHERE name = $1), 0) AS head) state
            LEFT JOIN LATERAL (
                SELECT id, version FROM records WHERE project = $1 AND collection = $2 AND NOT deleted AND \(filterSQL)
            ) r ON true
            ORDER BY r.id COLLATE "C"
            """
        let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        var head: Int64 = 0
        var pairs: [(String, Int64)] = []
        for try await (stateHead, id, version) in rows.decode((Int64, String?, Int64?).self) {
            head = stateHead
            if let id, let version { pairs.append((id, version)) }
        }
        return (head, pairs)
    }

    /// Counts the live matching rows.
    public func liveCount(project: String, collection: CollectionSchema, filter: Filter?) async throws -> Int {
        var binds = PostgresBindings()
        binds.append(project)
        binds.append(collection.name)
        let filterSQL = try Self.compile(filter, collection: collection, document: "data", into: &binds)
        let sql = "SELECT count(*) FROM records WHERE project = $1 AND collection = $2 AND NOT deleted AND \(filterSQL)"
        let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// Looks for one live matching row.
    public func containsLiveRecord(project: String, collection: CollectionSchema, matching filter: Filter) async throws -> Bool {
        var binds = PostgresBindings()
        binds.append(project)
        binds.append(collection.name)
        let filterSQL = try Self.compile(filter, collection: collection, document: "data", into: &binds)
        let sql = "SELECT 1 FROM records WHERE project = $1 AND collection = $2 AND NOT deleted AND \(filterSQL) LIMIT 1"
        let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        for try await _ in rows.decode(Int32.self) { return true }
        return false
    }

    /// `filter` compiled over the JSON text in column `document` (`true` without a filter); its arguments are
    /// appended to `binds`, numbered from the next free placeholder.
    static func compile(
        _ filter: Filter?, collection: CollectionSchema, document: String, into binds: inout PostgresBindings
    ) throws(ErrorBody) -> String {
        guard let filter else { return "true" }
        let compiled = try FilterSQL.compile(
            filter, collection: collection, dialect: .postgres, idExpression: "(id COLLATE \"C\")", firstPlaceholder: binds.count + 1,
            fieldExpression: RuleFields.reader(for: collection, document: document) { PostgresDialect().field($0, of: "\($1)::jsonb") })
        for argument in compiled.arguments { argument.append(to: &binds) }
        return compiled.sql
    }

    /// Rewrites `rule_data` of a collection's live records for `fields` (the data rules changed what they read).
    public func refreshRuleData(project: String, collection: String, fields: [String]) async throws {
        let value = fields.isEmpty ? "NULL" : "jsonb_build_object(" + fields.map { "'\($0)', data::jsonb -> '\($0)'" }.joined(separator: ", ") + ")::text"
        try await client.query(
            PostgresQuery(
                unsafeSQL: "UPDATE records SET rule_data = \(value) WHERE project = $1 AND collection = $2 AND NOT deleted",
                binds: { var binds = PostgresBindings(); binds.append(project); binds.append(collection); return binds }()),
            logger: logger)
    }
}

extension SQLArgument {
    /// Binds the argument with its PostgreSQL type: `text`, `int8`, and reals as exact decimal text, which
    /// ``PostgresDialect`` reads as `numeric`.
    func append(to binds: inout PostgresBindings) {
        switch self {
        case .null: binds.appendNull()
        case .integer(let int): binds.append(int)
        case .real(let double): binds.append(PostgresDialect.exactDecimal(double))
        case .text(let text): binds.append(text)
        }
    }
}
