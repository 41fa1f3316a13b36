import CairnProtocol
import Foundation
import NIOCore

/// The changes feed's rules around storage: a snapshot pins its high mark at the head version its first page saw,
/// cursors move past every version handed out, a cursor older than the purged tombstones is `cursor_expired`
/// (410), changes that left the filter come back as `gone`, and a client's pull is noted once it reaches the end.
///
/// ```swift
/// let page = try await ChangesFeed(storage: storage).page(project: "field", collection: notes, schemaVersion: schema.version,
///                                                         request: ChangesRequest(cursor: nil), clientID: nil, now: now)
/// ```
struct ChangesFeed: Sendable {
    let storage: any ServerStorage

    /// One page: the response body and where it leaves the reader.
    struct Page: Sendable {
        /// PROTOCOL.md's page object as JSON bytes.
        var body: ByteBuffer
        var cursor: FeedCursor
        var hasMore: Bool
        /// How many records (tombstones included) the page holds.
        var records: Int
    }

    /// Reads one page of `collection` for `request`.
    /// - Parameter clientID: the caller's `Cairn-Client-ID`, noted when the page reaches the end of the feed.
    func page(
        project: String, collection: CollectionSchema, schemaVersion: String, request: ChangesRequest, clientID: String?, now: Date
    ) async throws -> Page {
        // A snapshot's first page lists every live record; its high mark is the head version read with it.
        let start = request.cursor ?? FeedCursor(since: 0, snapshotHigh: Int64.max)
        let rows = try await storage.feedRange(
            project: project, collection: collection, since: start.since, snapshotHigh: start.snapshotHigh, limit: request.limit,
            filter: request.filter)
        if rows.purgedThrough > max(start.since, start.snapshotHigh ?? 0) {
            throw ErrorBody(
                code: .cursorExpired,
                message: "This cursor is older than the tombstone retention horizon: pull a fresh snapshot (omit since) and drop local records not in it")
        }
        let cursor = FeedCursor.after(start, rows: rows)
        // Noted once a pull reaches the end of the feed: a write per page would compete with batches.
        if !rows.hasMore, let clientID {
            try await storage.notePull(clientID: clientID, project: project, version: cursor.since, now: now)
        }
        return Page(body: Self.body(rows, cursor: cursor, schemaVersion: schemaVersion), cursor: cursor, hasMore: rows.hasMore, records: rows.rows.count)
    }

    /// The collection's digest, with a cursor at the head version read with it (a client that matches it may
    /// continue from there).
    func digest(project: String, collection: String) async throws -> DigestResponse {
        let live = try await storage.liveVersions(project: project, collection: collection)
        let digest = CollectionDigest(pairs: live.pairs)
        return DigestResponse(cursor: FeedCursor(since: live.head, snapshotHigh: nil).token, count: digest.count, digest: digest.value)
    }
}

extension FeedCursor {
    /// The cursor after a page read from `start`. A snapshot keeps its high mark (pinned at the head version its
    /// first page read) until it passes it; a page that reached the end moves to the head version it read, which
    /// every later change exceeds.
    static func after(_ start: FeedCursor, rows: FeedRows) -> FeedCursor {
        let last = rows.rows.last?.version ?? start.since
        guard rows.hasMore else { return FeedCursor(since: max(last, rows.head), snapshotHigh: nil) }
        let high = start.snapshotHigh == Int64.max ? rows.head : start.snapshotHigh
        if let high, last < high { return FeedCursor(since: last, snapshotHigh: high) }
        return FeedCursor(since: last, snapshotHigh: nil)
    }
}
