import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    func pendingOperations() throws -> [PendingOperation] {
        try writer.read { db in try PendingOperation.fetchAll(db) }
    }

    func failedOperations() throws -> [FailedOperation] {
        try writer.read { db in try FailedOperation.fetchAll(db) }
    }

    /// Drops every local change of these records (queued and failed) and shows the last server state again.
    func undoChanges(collection: String, ids: [String]) throws {
        let table = CollectionTable(schema: try self.collection(collection))
        try writer.write { db in
            for id in ids {
                try db.execute(sql: "DELETE FROM cairn_queue WHERE collection = ? AND record_id = ?", arguments: [collection, id])
                try db.execute(sql: "DELETE FROM cairn_failed WHERE collection = ? AND record_id = ?", arguments: [collection, id])
                try rebuildVisible(db, table: table, id: id)
            }
        }
    }

    /// Removes one queued operation and recomputes its record from what remains.
    func cancel(opId: String) throws {
        try writer.write { db in
            guard let row = try Row.fetchOne(db, sql: PendingOperation.selectSQL + " WHERE q.op_id = ?", arguments: [opId]) else {
                throw CairnError(.notFound, "no queued operation has opId \(opId)")
            }
            let operation = PendingOperation(row: row)
            try db.execute(sql: "DELETE FROM cairn_queue WHERE seq = ?", arguments: [operation.sequence])
            // A change that waited for this one now builds on its base.
            let shadow = try Shadow.fetch(db, operation.collection, operation.recordID)
            try db.execute(sql: "UPDATE cairn_queue SET waits_for = ?, base_version = CASE WHEN op = 'create' THEN NULL ELSE ? END WHERE waits_for = ?",
                           arguments: [operation.waitsFor, operation.waitsFor == nil ? shadow?.baseVersion : nil, opId])
            try rebuildVisible(db, table: CollectionTable(schema: try collection(operation.collection)), id: operation.recordID)
        }
    }

    /// Queues a failed operation again under a new opId, with `data` replacing its payload when given.
    func retryFailed(id: Int64, data: [String: JSONValue]?, now: Date = Date()) throws {
        try writer.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM cairn_failed WHERE id = ?", arguments: [id]) else {
                throw CairnError(.notFound, "no failed operation has id \(id)")
            }
            let failed = FailedOperation(row: row)
            let collection = try collection(failed.collection)
            let payload = data ?? failed.data
            if let payload, failed.kind != .patch {
                do throws(ErrorBody) { try collection.validate(data: payload) } catch { throw CairnError(error.code, error.message) }
            }
            try db.execute(sql: "DELETE FROM cairn_failed WHERE id = ?", arguments: [id])
            let latest = try PendingOperation.fetchLatest(db, collection: failed.collection, id: failed.recordID)
            let shadow = try Shadow.fetch(db, failed.collection, failed.recordID)
            try db.execute(
                sql: "INSERT INTO cairn_queue (op_id, collection, record_id, op, base_version, data, created_at, waits_for) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [OperationID.make(), failed.collection, failed.recordID, failed.kind.rawValue,
                            latest == nil && failed.kind != .create ? shadow?.baseVersion : nil,
                            payload.map { JSONValue.object($0).jsonText() }, now.timeIntervalSince1970, latest?.opId])
            try rebuildVisible(db, table: CollectionTable(schema: collection), id: failed.recordID)
        }
    }

    /// Deletes a failed operation and recomputes its record without it.
    func discardFailed(id: Int64) throws {
        try writer.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM cairn_failed WHERE id = ?", arguments: [id]) else {
                throw CairnError(.notFound, "no failed operation has id \(id)")
            }
            let failed = FailedOperation(row: row)
            try db.execute(sql: "DELETE FROM cairn_failed WHERE id = ?", arguments: [id])
            try rebuildVisible(db, table: CollectionTable(schema: try collection(failed.collection)), id: failed.recordID)
        }
    }

    /// Deletes every record, queue entry, cursor and remembered identity: the store is as new.
    func wipe() throws {
        try writer.write { db in
            for collection in schema?.collections ?? [] {
                try db.execute(sql: "DROP TABLE IF EXISTS \(CollectionTable.quote(collection.name))")
            }
            for table in ["cairn_meta", "cairn_collections", "cairn_resync", "cairn_queue", "cairn_shadow", "cairn_failed", "cairn_conflicts", "cairn_events"] {
                try db.execute(sql: "DELETE FROM \(table)")
            }
        }
        setCachedSchema(nil)
    }
}
