import CairnProtocol
import Foundation
import GRDB

/// The history of sync runs (``EventTable``, `cairn_events`): each run noted when it starts and when it ends, the
/// newest kept.
///
/// ```swift
/// let run = try store.history.begin(kind: .sync)
/// try store.history.end(run, summary: summary, error: nil)
/// ```
struct SyncHistory: Sendable {
    /// The store that keeps the history.
    let store: LocalStore
}

extension SyncHistory {
    /// Notes that a sync run of `kind` started; returns its id for ``end(_:summary:error:)``.
    func begin(kind: SyncKind) throws -> Int64 {
        let date = store.now
        return try store.writeBookkeeping { db in try store.events.begin(db, kind: kind, at: date) }
    }

    /// Notes how a sync run ended; the history keeps the newest runs only.
    func end(_ id: Int64, summary: SyncSummary, error: String?) throws {
        let date = store.now
        try store.writeBookkeeping { db in
            try store.events.end(db, id: id, summary: summary, error: error, at: date, keep: store.configuration.historyLimit)
        }
    }

    /// The newest sync runs, newest first.
    func entries(limit: Int) throws -> [SyncHistoryEntry] {
        try store.writer.read { db in try store.events.entries(db, limit: limit) }
    }

    /// The runs the history keeps that `filter` selects, newest first.
    func entries(matching filter: HistoryFilter, limit: Int) throws -> [SyncHistoryEntry] {
        try store.writer.read { db in Array(try store.events.entries(db, limit: Int.max).filter(filter.matches).prefix(max(0, limit))) }
    }
}
