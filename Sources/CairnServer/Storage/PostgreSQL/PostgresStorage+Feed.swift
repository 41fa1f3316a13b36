import CairnProtocol
import CairnSQL
import Foundation
import PostgresNIO

extension PostgresStorage {
    /// Reads the rows, `purged_through` and the head version in one statement (one snapshot), with the filter
    /// compiled by ``PostgresDialect``; fetches `limit + 1` rows to learn `hasMore`.
    public func feedRange(
        project: String, collection: CollectionSchema, since: Int64, snapshotHigh: Int64?, limit: Int, filter: Filter?
    ) async throws -> FeedRows {
        // $1 project, $2 collection, $3 since, $4 high mark, $5 limit; the filter's arguments from $6 on. Numbered
        // placeholders let the filter appear twice with one set of arguments.
        let compiled = try filter.map { filter throws(ErrorBody) in
            try FilterSQL.compile(filter, collection: collection, dialect: .postgres, idExpression: "(id COLLATE \"C\")", firstPlaceholder: 6) {
                field in PostgresDialect().field(field, of: "data::jsonb")
            }
        }
        let filterSQL = compiled?.sql ?? "true"
        var binds = PostgresBindings()
        binds.append(project)
        binds.append(collection.name)
        binds.append(since)
        binds.append(snapshotHigh ?? 0)
        binds.append(Int64(limit) + 1)
        for argument in compiled?.arguments ?? [] { argument.append(to: &binds) }
        let window = snapshotHigh == nil ? "" : " AND ((version <= $4 AND NOT deleted AND \(filterSQL)) OR version > $4)"
        let sql = """
            SELECT state.head, state.purged, r.id, r.version, r.updated_at, r.updated_by, r.deleted, r.data, r.matches
            FROM (SELECT coalesce((SELECT head_version FROM projects WHERE name = $1), 0) AS head,
                         coalesce((SELECT purged_through FROM collection_state WHERE project = $1 AND collection = $2), 0) AS purged) state
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
        for try await (head, purged, id, version, updatedAt, updatedBy, deleted, data, matches)
            in rows.decode((Int64, Int64, String?, Int64?, String?, String?, Bool?, String?, Bool?).self)
        {
            feed.head = head
            feed.purgedThrough = purged
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
    public func liveVersions(project: String, collection: String) async throws -> (head: Int64, pairs: [(String, Int64)]) {
        let rows = try await client.query(
            """
            SELECT state.head, r.id, r.version
            FROM (SELECT coalesce((SELECT head_version FROM projects WHERE name = \(project)), 0) AS head) state
            LEFT JOIN LATERAL (
                SELECT id, version FROM records WHERE project = \(project) AND collection = \(collection) AND NOT deleted
            ) r ON true
            ORDER BY r.id COLLATE "C"
            """, logger: logger)
        var head: Int64 = 0
        var pairs: [(String, Int64)] = []
        for try await (stateHead, id, version) in rows.decode((Int64, String?, Int64?).self) {
            head = stateHead
            if let id, let version { pairs.append((id, version)) }
        }
        return (head, pairs)
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
