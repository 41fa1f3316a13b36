import CairnProtocol
import Foundation
import GRDB

extension UploadQueue {
    /// Whether a change, an action call or a file deletion waits for upload, in one read.
    func hasPendingUpload() throws -> Bool {
        try store.writer.read { db in
            try store.queue.count(db) > 0 || store.queuedActions.count(db) > 0 || store.fileDeletions.hasQueued(db)
        }
    }

    /// How many changes and action calls wait for upload, and how many uploads failed.
    func counts() throws -> (pending: Int, failed: Int) {
        try store.writer.read { db in (try store.queue.count(db) + store.queuedActions.count(db), try store.failed.count(db)) }
    }

    /// Remembers the schema number the app build opens the store with; when it changed, the changes queued by the
    /// earlier build are marked with that build's number first, so they are uploaded (and translated) in its shape.
    func noteSchemaVersion(_ number: Int?) throws {
        try store.writer.write { db in
            let remembered = try store.metaTable.value(db, .schemaVersion).flatMap { Int($0) }
            guard remembered != number else { return }
            if let remembered { try store.queue.markSchemaVersion(db, remembered) }
            try store.metaTable.set(db, .schemaVersion, number.map(String.init))
        }
    }

    /// The changes waiting for upload that `filter` selects (oldest first by default).
    func pendingOperations(_ filter: OperationFilter = .all) throws -> [PendingOperation] {
        let matching = try filter.matchingIDs(in: store)
        return try store.writer.read { db in try pending(db, filter, matching: matching) }
    }

    /// The uploads the server rejected that `filter` selects (oldest first by default).
    func failedOperations(_ filter: OperationFilter = .all) throws -> [FailedOperation] {
        let matching = try filter.matchingIDs(in: store)
        return try store.writer.read { db in try failures(db, filter, matching: matching) }
    }

    private func pending(_ db: Database, _ filter: OperationFilter, matching: [String: Set<String>]?) throws -> [PendingOperation] {
        filter.apply(to: try store.queue.all(db), matching: matching) {
            OperationFilter.Facts(collection: $0.collection, id: $0.recordID, options: $0.options, changeSet: $0.changeSet)
        }
    }

    private func failures(_ db: Database, _ filter: OperationFilter, matching: [String: Set<String>]?) throws -> [FailedOperation] {
        filter.apply(to: try store.failed.all(db), matching: matching) {
            OperationFilter.Facts(collection: $0.collection, id: $0.recordID, options: $0.options, changeSet: $0.changeSet)
        }
    }

    /// Drops every local change of these records (queued and failed) and shows the last server state again.
    func undoChanges(collection: String, ids: [String]) throws {
        let table = try store.table(collection)
        try store.writer.write { db in
            for id in ids {
                try store.queue.removeAll(db, collection: collection, id: id)
                try store.failed.removeAll(db, collection: collection, id: id)
                try store.rebuildVisible(db, table: table, id: id)
            }
        }
    }

    /// Removes one queued operation and recomputes its record from what remains. A change that waited for it
    /// waits for what it waited for, or builds on its base.
    func cancel(opId: String) throws {
        try store.writer.write { db in
            guard let operation = try store.queue.operation(db, opId: opId) else {
                throw CairnError(.notFound, "no queued operation has opId \(opId)")
            }
            try cancel(db, operation)
        }
    }

    /// Cancels every queued operation `filter` selects, newest first so that each change that waited for another
    /// is released before the one it waited for goes, in one transaction. Returns how many were cancelled.
    func cancelPending(_ filter: OperationFilter) throws -> Int {
        let matching = try filter.matchingIDs(in: store)
        return try store.writer.write { db in
            let operations = try pending(db, filter, matching: matching).sorted { $0.sequence > $1.sequence }
            for operation in operations { try cancel(db, operation) }
            return operations.count
        }
    }

    private func cancel(_ db: Database, _ operation: PendingOperation) throws {
        try store.queue.remove(db, sequence: operation.sequence)
        let base = operation.waitsFor == nil ? try store.shadows.baseVersion(db, collection: operation.collection, id: operation.recordID) ?? nil : nil
        try store.queue.release(db, [QueueTable.Release(opId: operation.opId, baseVersion: base, next: operation.waitsFor)])
        try store.rebuildVisible(db, table: try store.table(operation.collection), id: operation.recordID)
    }

    /// Queues a failed operation (a change set whole) again under a new opId (after the record's queued changes), with
    /// `data` replacing its payload when given.
    func retryFailed(id: Int64, data: [String: JSONValue]?) throws {
        let date = store.now
        try store.writer.write { db in
            guard let operation = try store.failed.operation(db, id: id) else {
                throw CairnError(.notFound, "no failed operation has id \(id)")
            }
            try requeue(db, operation, data: data, at: date)
        }
    }

    /// Queues again every failed operation `filter` selects (each change set whole), unchanged, in the order they were
    /// made, in one transaction. Returns how many entries were queued.
    func retryFailed(_ filter: OperationFilter) throws -> Int {
        let date = store.now
        let matching = try filter.matchingIDs(in: store)
        return try store.writer.write { db in
            let entries = try failures(db, filter, matching: matching).sorted { $0.id < $1.id }
            for entry in entries { try requeue(db, entry, data: nil, at: date) }
            return entries.count
        }
    }

    /// Deletes a failed operation (a change set whole) and recomputes its record without it.
    func discardFailed(id: Int64) throws {
        try store.writer.write { db in
            guard let operation = try store.failed.operation(db, id: id) else {
                throw CairnError(.notFound, "no failed operation has id \(id)")
            }
            try discard(db, operation)
        }
    }

    /// Deletes every failed operation `filter` selects (each change set whole), in one transaction. Returns how many
    /// entries were deleted.
    func discardFailed(_ filter: OperationFilter) throws -> Int {
        let matching = try filter.matchingIDs(in: store)
        return try store.writer.write { db in
            let operations = try failures(db, filter, matching: matching)
            for operation in operations { try discard(db, operation) }
            return operations.count
        }
    }
}
