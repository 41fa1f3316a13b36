import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    /// The changes waiting for upload, oldest first.
    func pendingOperations() throws -> [PendingOperation] {
        try writer.read { db in try queue.all(db) }
    }

    /// The uploads the server rejected, oldest first.
    func failedOperations() throws -> [FailedOperation] {
        try writer.read { db in try failed.all(db) }
    }

    /// Drops every local change of these records (queued and failed) and shows the last server state again.
    func undoChanges(collection: String, ids: [String]) throws {
        let table = try self.table(collection)
        try writer.write { db in
            for id in ids {
                try queue.removeAll(db, collection: collection, id: id)
                try failed.removeAll(db, collection: collection, id: id)
                try rebuildVisible(db, table: table, id: id)
            }
        }
    }

    /// Removes one queued operation and recomputes its record from what remains. A change that waited for it
    /// waits for what it waited for, or builds on its base.
    func cancel(opId: String) throws {
        try writer.write { db in
            guard let operation = try queue.operation(db, opId: opId) else {
                throw CairnError(.notFound, "no queued operation has opId \(opId)")
            }
            try queue.remove(db, sequence: operation.sequence)
            let base = operation.waitsFor == nil ? try shadows.baseVersion(db, collection: operation.collection, id: operation.recordID) ?? nil : nil
            try queue.release(db, [QueueTable.Release(opId: opId, baseVersion: base, next: operation.waitsFor)])
            try rebuildVisible(db, table: try table(operation.collection), id: operation.recordID)
        }
    }

    /// Queues a failed operation (a change set whole) again under a new opId (after the record's queued changes), with
    /// `data` replacing its payload when given.
    func retryFailed(id: Int64, data: [String: JSONValue]?) throws {
        let date = now
        try writer.write { db in
            guard let operation = try failed.operation(db, id: id) else {
                throw CairnError(.notFound, "no failed operation has id \(id)")
            }
            try requeue(db, operation, data: data, at: date)
        }
    }

    /// Deletes a failed operation (a change set whole) and recomputes its record without it.
    func discardFailed(id: Int64) throws {
        try writer.write { db in
            guard let operation = try failed.operation(db, id: id) else {
                throw CairnError(.notFound, "no failed operation has id \(id)")
            }
            try discard(db, operation)
        }
    }
}
