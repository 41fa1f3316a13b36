import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension SyncServer {
    /// Default and largest page sizes of the changes feed.
    static let defaultPageLimit = 1000
    static let maximumPageLimit = 10_000

    func addChangesRoutes(to project: RouterGroup<CairnRequestContext>) {
        project.get("collections/:collection/changes") { request, context in
            let access = try await self.access(request, context, minimum: .reader)
            let (schema, collection) = try await self.collection(access, context)
            let query = try Self.changesQuery(request.uri.queryParameters, collection: collection)
            let rows = try await self.storage.changes(project: access.project, query: query)
            let needed = max(query.since, query.snapshotHigh ?? 0)
            if rows.purgedThrough > needed {
                throw APIError(
                    .gone, .cursorExpired,
                    "This cursor is older than the tombstone retention horizon: pull a fresh snapshot (omit since) and drop local records not in it")
            }
            let cursor = Self.nextCursor(query: query, rows: rows)
            // Noted once a pull reaches the end of the feed: a write per page would compete with batches.
            if !rows.hasMore, let clientID = request.headers[HTTPField.Name(CairnHeader.clientID)!] {
                try await self.storage.notePull(clientID: clientID, project: access.project, version: cursor.since, now: self.clock.now())
            }
            return Response.jsonBytes(Self.changesBody(rows: rows, cursor: cursor, schemaVersion: schema.version))
        }
        project.get("collections/:collection/digest") { request, context in
            let access = try await self.access(request, context, minimum: .reader)
            let (_, collection) = try await self.collection(access, context)
            let live = try await self.storage.liveVersions(project: access.project, collection: collection.name)
            let digest = CollectionDigest(pairs: live.pairs)
            return try Response.json(
                DigestResponse(cursor: FeedCursor(since: live.head, snapshotHigh: nil).token, count: digest.count, digest: digest.value))
        }
    }

    /// Reads `since`, `limit` and `where`; any bad value is `422 validation_failed` naming the parameter.
    static func changesQuery(_ parameters: Parameters, collection: CollectionSchema) throws -> ChangesQuery {
        var limit = defaultPageLimit
        if let text = parameters.get("limit") {
            guard let value = Int(text), (1...maximumPageLimit).contains(value) else {
                throw APIError.validation("limit must be an integer from 1 to \(maximumPageLimit)", field: "limit")
            }
            limit = value
        }
        var cursor = FeedCursor(since: 0, snapshotHigh: Int64.max)
        if let since = parameters.get("since") {
            guard let parsed = FeedCursor(token: since) else {
                throw APIError.validation("since is not a cursor this server issued", field: "since")
            }
            cursor = parsed
        }
        var compiled: CompiledFilter?
        if let text = parameters.get("where") {
            let filter: Filter
            do {
                filter = try JSONValueDecoder().decode(Filter.self, from: Array(text.utf8))
            } catch {
                throw APIError.validation("where is not a valid filter: \(error)", field: "where")
            }
            compiled = try FilterSQL.compile(filter, collection: collection) { field in .jsonMember(field.name, of: "data") }
        }
        return ChangesQuery(
            collection: collection.name, since: cursor.since, snapshotHigh: cursor.snapshotHigh, limit: limit, filter: compiled)
    }

    /// The cursor after a page. A snapshot fixes its high mark at the head version its first page saw; a page
    /// that reached the end moves the cursor to the head version it read, which every later change exceeds.
    static func nextCursor(query: ChangesQuery, rows: ChangesRows) -> FeedCursor {
        let high = query.snapshotHigh == Int64.max ? rows.head : query.snapshotHigh
        guard rows.hasMore else { return FeedCursor(since: max(rows.lastVersion, rows.head), snapshotHigh: nil) }
        if let high, rows.lastVersion < high { return FeedCursor(since: rows.lastVersion, snapshotHigh: high) }
        return FeedCursor(since: rows.lastVersion, snapshotHigh: nil)
    }

    /// The page's JSON, assembled around the entries SQLite already rendered.
    static func changesBody(rows: ChangesRows, cursor: FeedCursor, schemaVersion: String) -> ByteBuffer {
        var size = 96 + schemaVersion.utf8.count
        for entry in rows.entries { size += entry.utf8.count + 1 }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(size)
        buffer.writeString("{\"changes\":[")
        for (index, entry) in rows.entries.enumerated() {
            if index > 0 { buffer.writeString(",") }
            buffer.writeString(entry)
        }
        buffer.writeString("],\"cursor\":\"\(cursor.token)\",\"hasMore\":\(rows.hasMore),\"schemaVersion\":\"\(schemaVersion)\"}")
        return buffer
    }
}
