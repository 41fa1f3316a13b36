import CairnProtocol
import Foundation
import GRDB

/// The upload queue over the tables it owns: the changes waiting for upload (``QueueTable``, `cairn_queue`) and the
/// uploads the server rejected (``FailedTable``, `cairn_failed`). A local write queues its change in the store's
/// own transaction (``LocalStore/write(_:collection:id:change:changeSet:)``); from there the queue hands out
/// batches, records the server's answers, and lets the app inspect, cancel, retry and discard.
///
/// ```swift
/// let batch = try store.uploads.takeBatch(limit: 100)
/// let conflicts = try store.uploads.recordAnswers(results, for: batch)
/// ```
struct UploadQueue: Sendable {
    /// The store whose records the queued changes belong to.
    let store: LocalStore
}

extension UploadQueue {
    /// The next batch of queued changes ready to upload, at most one per record, oldest first: up to `limit` changes
    /// and `bytes` of encoded operations, or one change set whole (``QueueTable/takeReady(_:limit:bytes:after:groups:)``);
    /// marks them attempted (so they are never changed again and every retry sends the same operation).
    /// - Parameter after: take only positions after this one (the newest already in flight); older changes that
    ///   become ready meanwhile go in a later batch.
    /// - Parameter groups: take only changes of these upload groups; `nil`: any change not held.
    func takeBatch(limit: Int, bytes: Int = .max, after: Int64 = 0, groups: Set<String>? = nil) throws -> [PendingOperation] {
        try store.writeBookkeeping { db in
            try store.files.rewriteLocalFileIDs(db, try store.queue.takeReady(db, limit: limit, bytes: bytes, after: after, groups: groups))
        }
    }

    /// Records the server's answers: applied uploads leave the queue and move their records' base on, rejected ones
    /// move to the failed list; the changes queued on top of either are released. Returns the conflicts to resolve
    /// (their changes stay queued).
    ///
    /// A change set the server did not apply whole (an operation refused or in conflict: the atomic batch was rolled
    /// back) moves to the failed list whole, as one entry, with no conflict to resolve: resolving one operation on
    /// its own could drop it from the set.
    func recordAnswers(_ results: [ScannedResult], for operations: [PendingOperation]) throws -> [(PendingOperation, ServerRecord)] {
        let date = store.now
        return try store.writeBookkeeping { db in
            if operations.first?.changeSet != nil, results.contains(where: { $0.status != .applied }) {
                for (operation, result) in zip(operations, results) where result.status == .conflict {
                    if let current = result.current { try noteServerState(db, operation, current) }
                }
                try fail(db, operations, errors: results.map(\.setRefusal), at: date)
                return []
            }
            var conflicts: [(PendingOperation, ServerRecord)] = []
            var applied: [(PendingOperation, ScannedResult)] = []
            var rejected: [QueueTable.Release] = []
            for (operation, result) in zip(operations, results) {
                switch result.status {
                case .applied:
                    applied.append((operation, result))
                case .rejected:
                    rejected.append(try moveToFailed(db, operation, error: result.refusal, at: date))
                case .conflict:
                    guard let current = result.current else { throw CairnError.badResponse("a conflict result carries no current state") }
                    conflicts.append((operation, current))
                }
            }
            // Applied uploads leave the queue; what waited for an answered upload builds on its outcome now.
            try store.queue.remove(db, sequences: applied.map(\.0.sequence))
            try store.queue.release(db, rejected + applied.map { QueueTable.Release(opId: $0.0.opId, baseVersion: $0.1.version ?? 0) })
            try store.acknowledge(db, applied)
            for (collection, entries) in Dictionary(grouping: applied, by: \.0.collection) {
                try store.files.applyFileOverlays(db, table: store.table(collection), ids: entries.lazy.map(\.0.recordID))
            }
            return conflicts
        }
    }

    /// Moves these uploads to the failed list with their errors, and releases what waited for them.
    private func fail(_ db: Database, _ operations: [PendingOperation], errors: [ErrorBody], at date: Date) throws {
        try store.queue.release(db, try zip(operations, errors).map { try moveToFailed(db, $0, error: $1, at: date) })
    }

    /// Moves one upload from the queue to the failed list; returns the release of what waited for it, which builds on
    /// the record's base again.
    private func moveToFailed(_ db: Database, _ operation: PendingOperation, error: ErrorBody, at date: Date) throws -> QueueTable.Release {
        try store.failed.add(db, operation, error: error, at: date)
        try store.queue.remove(db, sequence: operation.sequence)
        let base = try store.shadows.baseVersion(db, collection: operation.collection, id: operation.recordID) ?? nil
        return QueueTable.Release(opId: operation.opId, baseVersion: base)
    }
}

extension ScannedResult {
    /// Why an operation of a change set the server rolled back did not apply: its refusal, or for a conflict, a
    /// `conflict` error naming the server's version.
    var setRefusal: ErrorBody {
        guard status == .conflict else { return refusal }
        let version = current?.version
        return ErrorBody(
            code: .conflict,
            message: "the record changed on the server\(version.map { " (now version \($0))" } ?? "") after the change was made; "
                + "the change set was not applied",
            details: version.map { ["version": .integer($0)] })
    }
}
