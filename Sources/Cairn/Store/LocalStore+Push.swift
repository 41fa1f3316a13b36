import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    /// Up to `limit` queued changes ready to upload, at most one per record, oldest first; marks them attempted
    /// (so they are never changed again and every retry sends the same operation).
    /// - Parameter after: take only positions after this one (the newest already in flight); older changes that
    ///   become ready meanwhile go in a later batch.
    func takeBatch(limit: Int, after: Int64 = 0) throws -> [PendingOperation] {
        try writeBookkeeping { db in try rewriteLocalFileIDs(db, try queue.takeReady(db, limit: limit, after: after)) }
    }

    /// Records the server's answers: applied uploads leave the queue and move their records' base on, rejected ones
    /// move to the failed list; the changes queued on top of either are released. Returns the conflicts to resolve
    /// (their changes stay queued).
    func recordAnswers(_ results: [ScannedResult], for operations: [PendingOperation]) throws -> [(PendingOperation, ServerRecord)] {
        let date = now
        return try writeBookkeeping { db in
            var conflicts: [(PendingOperation, ServerRecord)] = []
            var applied: [(PendingOperation, ScannedResult)] = []
            var rejected: [QueueTable.Release] = []
            for (operation, result) in zip(operations, results) {
                switch result.status {
                case .applied:
                    applied.append((operation, result))
                case .rejected:
                    try failed.add(db, operation, error: result.refusal, at: date)
                    try queue.remove(db, sequence: operation.sequence)
                    let base = try shadows.baseVersion(db, collection: operation.collection, id: operation.recordID) ?? nil
                    rejected.append(QueueTable.Release(opId: operation.opId, baseVersion: base))
                case .conflict:
                    guard let current = result.current else { throw CairnError.badResponse("a conflict result carries no current state") }
                    conflicts.append((operation, current))
                }
            }
            // Applied uploads leave the queue; what waited for an answered upload builds on its outcome now.
            try queue.remove(db, sequences: applied.map(\.0.sequence))
            try queue.release(db, rejected + applied.map { QueueTable.Release(opId: $0.0.opId, baseVersion: $0.1.version ?? 0) })
            try acknowledge(db, applied)
            for (collection, entries) in Dictionary(grouping: applied, by: \.0.collection) {
                try applyFileOverlays(db, table: table(collection), ids: entries.lazy.map(\.0.recordID))
            }
            return conflicts
        }
    }
}
