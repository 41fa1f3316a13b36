import CairnProtocol
import Foundation
import GRDB

extension UploadQueue {
    /// Refuses a change set that no server takes as one batch by default: more than 1000 operations or 10 MiB of them.
    func checkChangeSet(_ db: Database, _ changeSet: String) throws {
        let operations = try store.queue.operations(db, changeSet: changeSet)
        guard operations.count <= BatchRequest.defaultMaximumOperations else {
            throw CairnError(.payloadTooLarge, "A change set holds at most \(BatchRequest.defaultMaximumOperations) operations and this one has "
                + "\(operations.count); split it into several sets")
        }
        let bytes = operations.reduce(32) { $0 + $1.wireSize }
        guard bytes <= BatchRequest.defaultMaximumBytes else {
            throw CairnError(.payloadTooLarge, "A change set uploads at most \(BatchRequest.defaultMaximumBytes) bytes and this one "
                + "\(bytes); split it into several sets")
        }
    }

    /// A change set's operation was in conflict with `current`: its record's latest known server state moves there
    /// (unless a newer one is known), so that a retry builds on it.
    func noteServerState(_ db: Database, _ operation: PendingOperation, _ current: ServerRecord) throws {
        guard var shadow = try store.shadows.shadow(db, collection: operation.collection, id: operation.recordID),
            current.version >= (shadow.serverVersion ?? 0)
        else { return }
        shadow.serverVersion = current.version
        shadow.serverData = current.deleted ? nil : current.data
        try store.shadows.save(db, shadow, collection: operation.collection, id: operation.recordID)
    }

    /// Queues failed uploads again under new opIds (after their records' queued changes), in their order: a change
    /// set's entry whole, as a new set. `data` replaces the payload of the operation the entry describes. An operation
    /// that failed in conflict builds on the latest server state known now, so the retry applies over the other change.
    func requeue(_ db: Database, _ entry: FailedOperation, data: [String: JSONValue]?, at date: Date) throws {
        let members = entry.changeSet == nil ? [entry] : entry.changeSetOperations
        let changeSet = entry.changeSet.map { _ in OperationID.make() }
        for operation in members {
            let table = try store.table(operation.collection)
            let payload = operation.id == entry.id ? data ?? operation.data : operation.data
            if let payload, operation.kind != .patch {
                do throws(ErrorBody) { try table.schema.validate(data: payload) } catch { throw CairnError(error.code, error.message) }
            }
            try store.failed.remove(db, id: operation.id)
            if operation.error.code == .conflict, var shadow = try store.shadows.shadow(db, collection: operation.collection, id: operation.recordID) {
                shadow.baseVersion = shadow.serverVersion
                shadow.baseData = shadow.serverData
                try store.shadows.save(db, shadow, collection: operation.collection, id: operation.recordID)
            }
            let base = try store.shadows.baseVersion(db, collection: operation.collection, id: operation.recordID) ?? nil
            try store.queue.enqueue(db, collection: operation.collection, id: operation.recordID, QueueCombiner.Change(operation.kind, payload),
                              base: base, combining: .none, changeSet: changeSet, options: operation.options, at: date)
            try store.rebuildVisible(db, table: table, id: operation.recordID)
        }
    }

    /// Deletes failed uploads (a change set's entry whole) and recomputes their records without them.
    func discard(_ db: Database, _ entry: FailedOperation) throws {
        let members = entry.changeSet == nil ? [entry] : entry.changeSetOperations
        for operation in members { try store.failed.remove(db, id: operation.id) }
        for operation in members { try store.rebuildVisible(db, table: try store.table(operation.collection), id: operation.recordID) }
    }
}
