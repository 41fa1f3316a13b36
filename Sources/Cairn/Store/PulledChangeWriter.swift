import CairnProtocol
import Foundation
import GRDB

/// The one rule of a change pulled from the server, whatever brought it (the feed, a download query, an online
/// read): a record with local changes keeps its row, which shows them, and only its shadow's server state moves on;
/// any other record's row takes the change (a newer state replaces it, a tombstone deletes it).
///
/// Made once per page: it asks ``LocalChanges`` which of the page's records hold local changes, and prepares the row
/// statements.
struct PulledChangeWriter {
    /// The collection table the rows are written to.
    let table: CollectionTable
    private let db: Database
    private let shadows: ShadowTable
    private let pending: Set<String>
    private let rows: PulledRowWriter

    /// Prepares the writing of the changes of the records `ids`, none other.
    init(_ db: Database, table: CollectionTable, shadows: ShadowTable, ids: some Sequence<String>) throws {
        self.db = db
        self.table = table
        self.shadows = shadows
        pending = try LocalChanges.ids(db, collection: table.name, among: ids)
        rows = try table.pulledRowWriter(db)
    }

    /// Writes one pulled change.
    func write(_ change: ScannedChange) throws {
        if pending.contains(change.id) {
            try shadows.moveServerState(db, collection: table.name, to: change)
        } else {
            try rows.write(change)
        }
    }

    /// The server has no record `id`: its row goes, unless it holds local changes (then row and shadow stay).
    func removeUnlessPending(_ id: String) throws {
        guard !pending.contains(id) else { return }
        try rows.write(ScannedChange(id: id, version: 0, removed: true))
    }
}
