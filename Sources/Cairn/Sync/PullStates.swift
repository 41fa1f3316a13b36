import CairnProtocol
import Foundation
import GRDB

/// Each collection's download state (``CollectionStateTable``, `cairn_collections`): its cursor, whether a pull is
/// under way, and a snapshot started over after `cursor_expired`. The pulled pages themselves move the cursor in
/// ``LocalStore/apply(_:to:)``.
///
/// ```swift
/// let since = try store.pullStates.state("notes").cursor
/// ```
struct PullStates: Sendable {
    /// The store whose collections are pulled.
    let store: LocalStore
}

extension PullStates {
    /// A collection's download state.
    func state(_ collection: String) throws -> CollectionPullState {
        try store.writer.read { db in try store.collectionStates.state(db, collection) }
    }

    /// Starts over with a snapshot after `410 cursor_expired`: local records absent from the snapshot are dropped
    /// when it completes (records with local changes are kept).
    func beginResync(_ collection: String) throws {
        try store.writer.write { db in try store.collectionStates.beginResync(db, collection) }
    }

    /// Forgets the versions of own writes up to `version`: every pull that was sent them reached its end.
    func forgetOwn(_ collection: String, through version: Int64) throws {
        try store.writeBookkeeping { db in try store.collectionStates.forgetOwn(db, collection, through: version) }
    }

    /// Notes that a pull of `collection` started (for ``hasPendingDownload()`` after a crash).
    func markPulling(_ collection: String) throws {
        try store.writeBookkeeping { db in try store.collectionStates.markPulling(db, collection) }
    }

    /// True when the last download of any collection was interrupted.
    func hasPendingDownload() throws -> Bool {
        try store.writer.read { db in try store.collectionStates.hasPendingDownload(db) }
    }
}
