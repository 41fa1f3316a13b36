import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    /// The changes waiting for upload that `filter` selects (oldest first by default).
    func pendingOperations(_ filter: OperationFilter = .all) throws -> [PendingOperation] {
        try writer.read { db in try pending(db, filter) }
    }

    /// The uploads the server rejected that `filter` selects (oldest first by default).
    func failedOperations(_ filter: OperationFilter = .all) throws -> [FailedOperation] {
        try writer.read { db in try failures(db, filter) }
    }

    private func pending(_ db: Database, _ filter: OperationFilter) throws -> [PendingOperation] {
        filter.apply(to: try queue.all(db), collection: \.collection, id: \.recordID)
    }

    private func failures(_ db: Database, _ filter: OperationFilter) throws -> [FailedOperation] {
        filter.apply(to: try failed.all(db), collection: \.collection, id: \.recordID)
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
            try cancel(db, operation)
        }
    }

    /// Cancels every queued operation `filter` selects, newest first so that each change that waited for another
    /// is released before the one it waited for goes, in one transaction. Returns how many were cancelled.
    func cancelPending(_ filter: OperationFilter) throws -> Int {
        try writer.write { db in
            let operations = try pending(db, filter).sorted { $0.sequence > $1.sequence }
            for operation in operations { try cancel(db, operation) }
            return operations.count
        }
    }

    private func cancel(_ db: Database, _ operation: PendingOperation) throws {
        try queue.remove(db, sequence: operation.sequence)
        let base = operation.waitsFor == nil ? try shadows.baseVersion(db, collection: operation.collection, id: operation.recordID) ?? nil : nil
        try queue.release(db, [QueueTable.Release(opId: operation.opId, baseVersion: base, next: operation.waitsFor)])
        try rebuildVisible(db, table: try table(operation.collection), id: operation.recordID)
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

    /// Queues again every failed operation `filter` selects (each change set whole), unchanged, in the order they were
    /// made, in one transaction. Returns how many entries were queued.
    func retryFailed(_ filter: OperationFilter) throws -> Int {
        let date = now
        return try writer.write { db in
            let entries = try failures(db, filter).sorted { $0.id < $1.id }
            for entry in entries { try requeue(db, entry, data: nil, at: date) }
            return entries.count
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

    /// Deletes every failed operation `filter` selects (each change set whole), in one transaction. Returns how many
    /// entries were deleted.
    func discardFailed(_ filter: OperationFilter) throws -> Int {
        try writer.write { db in
            let operations = try failures(db, filter)
            for operation in operations { try discard(db, operation) }
            return operations.count
        }
    }
}
