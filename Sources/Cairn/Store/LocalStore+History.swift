import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    /// Notes that a sync run of `kind` started; returns its id for ``endHistory(_:summary:error:)``.
    func beginHistory(kind: SyncKind) throws -> Int64 {
        let date = now
        return try writeBookkeeping { db in try events.begin(db, kind: kind, at: date) }
    }

    /// Notes how a sync run ended; the history keeps the newest runs only.
    func endHistory(_ id: Int64, summary: SyncSummary, error: String?) throws {
        let date = now
        try writeBookkeeping { db in
            try events.end(db, id: id, summary: summary, error: error, at: date, keep: configuration.historyLimit)
        }
    }

    /// The newest sync runs, newest first.
    func history(limit: Int) throws -> [SyncHistoryEntry] {
        try writer.read { db in try events.entries(db, limit: limit) }
    }

    /// The runs the history keeps that `filter` selects, newest first.
    func history(matching filter: HistoryFilter, limit: Int) throws -> [SyncHistoryEntry] {
        try writer.read { db in Array(try events.entries(db, limit: Int.max).filter(filter.matches).prefix(max(0, limit))) }
    }

    /// How many changes wait for upload, and how many uploads failed.
    /// Whether a change or a file deletion waits for upload, in one read.
    func hasPendingUpload() throws -> Bool {
        try writer.read { db in try queue.count(db) > 0 || fileDeletions.hasQueued(db) }
    }

    func counts() throws -> (pending: Int, failed: Int) {
        try writer.read { db in (try queue.count(db), try failed.count(db)) }
    }

    /// The newest conflicts and their resolutions, newest first.
    func conflicts(limit: Int) throws -> [ConflictRecord] {
        try writer.read { db in try conflictLog.entries(db, limit: limit) }
    }

    /// True when the last download of any collection was interrupted.
    func hasPendingDownload() throws -> Bool {
        try writer.read { db in try collectionStates.hasPendingDownload(db) }
    }
}
