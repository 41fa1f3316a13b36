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

    /// Reads the rows (``FeedStatement``), `purged_through` and the head version in one statement (one snapshot).
    public func feedRange(
        project: String, collection: CollectionSchema, since: Int64, snapshotHigh: Int64?, limit: Int, selection: FeedSelection
    ) async throws -> FeedRows {
        let page = try FeedStatement(
            project: project, collection: collection, since: since, snapshotHigh: snapshotHigh, limit: limit, selection: selection,
            dialect: PostgresRecordsDialect())
        var binds = PostgresBindings()
        for argument in page.arguments { argument.append(to: &binds) }
        let projectPlaceholder = "$\(binds.count + 1)", collectionPlaceholder = "$\(binds.count + 2)"
        binds.append(project)
        binds.append(collection.name)
        let state = "WHERE project = \(projectPlaceholder) AND collection = \(collectionPlaceholder)"
        let sql = """
            SELECT state.head, state.purged, state.history, r.id, r.version, r.updated_at, r.updated_by, r.deleted, r.data, r.matches
            FROM (SELECT coalesce((SELECT head_version FROM projects WHERE name = \(projectPlaceholder)), 0) AS head,
                         coalesce((SELECT purged_through FROM collection_state \(state)), 0) AS purged,
                         coalesce((SELECT history_through FROM collection_state \(state)), 0) AS history) state
            LEFT JOIN LATERAL (\(page.sql)) r ON true
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
    public func liveDigest(
        project: String, collection: CollectionSchema, filter: Filter?
    ) async throws -> (head: Int64, digest: CollectionDigest) {
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
        var digest = CollectionDigest.Builder()
        for try await (stateHead, id, version) in rows.decode((Int64, String?, Int64?).self) {
            head = stateHead
            if let id, let version { digest.add(id: id, version: version) }
        }
        return (head, digest.digest)
    }

    /// Counts the live matching rows, to `limit` at most (``LiveCountStatement``).
    public func liveCount(project: String, collection: CollectionSchema, filter: Filter?, limit: Int?) async throws -> Int {
        let statement = try LiveCountStatement(project: project, collection: collection, filter: filter, limit: limit, dialect: PostgresRecordsDialect())
        var binds = PostgresBindings()
        for argument in statement.arguments { argument.append(to: &binds) }
        let rows = try await client.query(PostgresQuery(unsafeSQL: statement.sql, binds: binds), logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// `filter` compiled over the JSON text in column `document` (`true` without a filter); its arguments are
    /// appended to `binds`, numbered from the next free placeholder.
    static func compile(
        _ filter: Filter?, collection: CollectionSchema, document: String, into binds: inout PostgresBindings
    ) throws(ErrorBody) -> String {
        guard let filter else { return "true" }
        let compiled = try PostgresRecordsDialect().compile(filter, collection: collection, document: document, firstPlaceholder: binds.count + 1)
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
