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
}

extension LocalStore {
    /// A collection's download state.
    func pullState(_ collection: String) throws -> CollectionPullState {
        try writer.read { db in try cursors.state(db, collection) }
    }

    /// Starts over with a snapshot after `410 cursor_expired`: local records absent from the snapshot are dropped
    /// when it completes (records with pending changes are kept).
    func beginResync(_ collection: String) throws {
        try writer.write { db in try cursors.beginResync(db, collection) }
    }

    /// Notes that a pull of `collection` started (for `hasPendingDownload` after a crash).
    func markPulling(_ collection: String) throws {
        try writer.write { db in try cursors.markPulling(db, collection) }
    }

    /// Reads a pulled page (no database access: it may run while another page is being applied).
    func scan(_ body: Data, collection name: String) throws -> PulledPage {
        let fields = try collection(name).fields
        let page: ScannedPage
        do {
            page = try body.withUnsafeBytes { raw in try ScannedPage(bytes: raw.bindMemory(to: UInt8.self), fields: fields) }
        } catch {
            throw CairnError.badResponse("the changes page could not be read: \(error)", cause: error)
        }
        guard let cursor = page.cursor, let hasMore = page.hasMore else {
            throw CairnError.badResponse("a changes page needs changes, cursor and hasMore")
        }
        return PulledPage(changes: page.changes, cursor: cursor, hasMore: hasMore, bytes: body.count)
    }

    /// Applies a scanned page and its cursor in one transaction. Records with local changes keep showing them;
    /// only their server state moves on.
    func applyPage(_ page: PulledPage, collection name: String) throws -> AppliedPage {
        let table = try self.table(name)
        let date = now
        return try writeBookkeeping { db in
            let pendingIDs = try shadows.recordIDs(db, collection: name)
            let rows = try table.pulledRowWriter(db)
            for change in page.changes {
                if pendingIDs.contains(change.id) {
                    try shadows.moveServerState(db, collection: name, to: change)
                } else {
                    try rows.write(change)
                }
            }
            if try cursors.noteListed(db, name, ids: page.changes.lazy.filter { !$0.removed }.map(\.id)), !page.hasMore {
                // The fresh snapshot is complete: what it did not list is gone, unless it holds local changes.
                try table.removeUnlisted(db)
                try shadows.markServerDeleted(db, collection: name, unlessListedIn: CursorTable.listedIDsSQL)
                try cursors.endResync(db, name)
            }
            try applyFileOverlays(db, table: table, ids: page.changes.lazy.map(\.id))
            try cursors.commit(db, name, cursor: page.cursor, hasMore: page.hasMore, at: date)
            return AppliedPage(changes: page.changes.count, bytes: page.bytes, hasMore: page.hasMore)
        }
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
            let pending = try shadows.recordIDs(db, collection: name).contains(id)
            guard let change else {
                if !pending { try table.pulledRowWriter(db).write(ScannedChange(id: id, version: 0, removed: true, fields: [])) }
                return
            }
            if pending {
                try shadows.moveServerState(db, collection: name, to: change)
            } else {
                try table.pulledRowWriter(db).write(change)
            }
            try applyFileOverlays(db, table: table, ids: [id])
        }
    }
}
