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
    /// How many records the snapshot holds, on a snapshot's first page (for the time-left estimate).
    var total: Int? = nil
    /// The versions of own writes its request said the store holds: forgotten once the feed's end is reached.
    var sentOwn: VersionRanges? = nil
}

/// The cursor a pulled page moves, and with it what its source keeps besides the collection's rows. Every source of
/// pages names one; a new source (a server-built snapshot, a change of the user's data rules) is a new case here and
/// its bookkeeping in ``LocalStore/apply(_:to:)``.
enum PageCursor: Sendable, Hashable {
    /// The collection's changes feed (`cairn_collections`), or its fresh snapshot after `cursor_expired`.
    case feed(collection: String)
    /// A download query's cursors (`cairn_download_queries`) and the records it holds.
    case query(name: String, collection: String, phase: DownloadQueryTable.Phase)

    /// The collection whose rows the page writes.
    var collection: String {
        switch self {
        case .feed(let collection), .query(_, let collection, _): collection
        }
    }
}

extension LocalStore {
    /// Reads a pulled page (no database access: it may run while another page is being applied).
    func scan(_ body: Data, collection name: String) throws -> PulledPage {
        let fields = try collection(name).fields
        let page: ScannedPage
        do {
            page = try ScannedPage(page: PageBytes(Array(body)), fields: fields)
        } catch {
            throw CairnError.badResponse("the changes page could not be read: \(error)", cause: error)
        }
        guard let cursor = page.cursor, let hasMore = page.hasMore else {
            throw CairnError.badResponse("a changes page needs changes, cursor and hasMore")
        }
        return PulledPage(changes: page.changes, cursor: cursor, hasMore: hasMore, bytes: body.count, total: page.total)
    }

    /// The page answering `request`, scanned, with the own writes the request named (forgotten once it ends the feed).
    func scan(_ body: Data, answering request: PageRequest) throws -> PulledPage {
        var page = try scan(body, collection: request.cursor.collection)
        page.sentOwn = request.own
        return page
    }

    /// Applies a scanned page and moves its cursor in one transaction: the one path of every source of pages. Each
    /// change goes through ``PulledChangeWriter`` (records with local changes keep showing them; only their server
    /// state moves on), then the cursor's own bookkeeping runs, then the file overlays of the page's records.
    func apply(_ page: PulledPage, to cursor: PageCursor) throws -> AppliedPage {
        let table = try self.table(cursor.collection)
        let date = now
        return try writeBookkeeping { db in
            let changes = try PulledChangeWriter(db, table: table, shadows: shadows, ids: page.changes.lazy.map(\.id))
            switch cursor {
            case .feed:
                try applyFeedPage(db, page, changes: changes, at: date)
            case .query(let name, _, let phase):
                try downloadQueries.applyPage(db, page, query: name, phase: phase, changes: changes, at: date)
            }
            try files.applyFileOverlays(db, table: table, ids: page.changes.lazy.map(\.id))
            return AppliedPage(changes: page.changes.count, bytes: page.bytes, hasMore: page.hasMore)
        }
    }

    /// A page of the collection's feed: its changes, then, when it ends a fresh snapshot, what the snapshot did not
    /// list goes (unless it holds local changes), and the cursor moves.
    private func applyFeedPage(_ db: Database, _ page: PulledPage, changes: PulledChangeWriter, at date: Date) throws {
        let name = changes.table.name
        for change in page.changes { try changes.write(change) }
        if try collectionStates.noteListed(db, name, ids: page.changes.lazy.filter { !$0.removed }.map(\.id)), !page.hasMore {
            try changes.table.removeUnlisted(db)
            try shadows.markServerDeleted(db, collection: name, unlessListedIn: CollectionStateTable.listedIDsSQL)
            try collectionStates.endResync(db, name)
        }
        try collectionStates.commit(db, name, cursor: page.cursor, hasMore: page.hasMore, at: date)
        // The end of the feed is past every own write the pull was told of.
        if !page.hasMore, let sent = page.sentOwn?.highest { try collectionStates.forgetOwn(db, name, through: sent) }
    }

    /// The `(id, version)` pairs of the server states this replica holds, for ``CollectionDigest``.
    func serverPairs(_ collection: String) throws -> [(String, Int64)] {
        let table = try self.table(collection)
        return try writer.read { db in try table.serverStates(db) }
    }

    /// Applies one record read from the server now (``CairnClient/fetchFromServer(_:id:)``), outside any cursor: the
    /// row takes it unless it holds a newer version or local changes (then only its shadow's server state moves). A
    /// record the server does not have (`nil`) removes a row without local changes.
    func applyFetched(_ change: ScannedChange?, collection name: String, id: String) throws {
        let table = try self.table(name)
        try writeBookkeeping { db in
            let changes = try PulledChangeWriter(db, table: table, shadows: shadows, ids: [id])
            guard let change else {
                try changes.removeUnlessPending(id)
                return
            }
            try changes.write(change)
            try files.applyFileOverlays(db, table: table, ids: [id])
        }
    }
}
