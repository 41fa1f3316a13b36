import CairnProtocol
import Foundation
import GRDB

/// A local write as the app asks for it.
enum LocalChange: Sendable {
    /// Create a record; `already_exists` if it exists locally.
    case create([String: JSONValue])
    /// Create or fully replace a record.
    case save([String: JSONValue])
    /// Apply a JSON Merge Patch; `not_found` if the record does not exist locally.
    case patch([String: JSONValue])
    /// Delete the record; `not_found` if it does not exist locally.
    case delete
}

extension LocalStore {
    /// Applies a local write and queues its upload in one transaction: once this returns, the change survives a crash.
    @discardableResult
    /// Failures come as ``CairnError``s (a full device: `storage_full`, ``CairnError/init(wrapping:)``).
    func write(collection name: String, id: String, change: LocalChange, options: WriteOptions = .none) throws -> LocalRecord? {
        try writing { db in try write(db, collection: name, id: id, change: change, options: options) }
    }

    /// One write transaction whose failure comes as a ``CairnError``: a full device says `storage_full`, SQLite's other
    /// failures `store_failed`, and Cairn's own errors come through as they are.
    func writing<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try writer.write(body) } catch { throw CairnError.store(error) }
    }

    /// Applies a local write inside the caller's transaction; returns the record as it now shows (`nil`: deleted).
    /// - Parameters:
    ///   - changeSet: the change set the write belongs to (``CairnClient/writeChangeSet(options:_:)``), if any.
    ///   - options: its upload group, custom tag and headers (checked here).
    func write(
        _ db: Database, collection name: String, id: String, change: LocalChange, changeSet: String? = nil, options: WriteOptions = .none
    ) throws -> LocalRecord? {
        try options.validate()
        let table = try self.table(name)
        guard Names.isValidID(id) else { throw CairnError.invalid("id \"\(id)\" must be 1-128 characters of [A-Za-z0-9_.:-]") }
        // Only a patch reads the row's data; the other writes need its versions alone.
        let current = try table.state(db, id: id)
        let kind: OperationKind
        let payload: [String: JSONValue]?
        var newData: [String: JSONValue]?
        switch change {
        case .create(let data):
            guard current == nil else { throw CairnError(.alreadyExists, "\(name)/\(id) already exists") }
            kind = .create
            payload = data.filter { !$0.value.isNull }
            newData = payload
        case .save(let data):
            kind = current == nil ? .create : .update
            payload = data.filter { !$0.value.isNull }
            newData = payload
        case .patch(let patch):
            guard current != nil, let visible = try table.row(db, id: id) else { throw CairnError(.notFound, "\(name)/\(id) does not exist") }
            kind = .patch
            payload = patch
            newData = QueueCombiner.merged(visible.data, patch)
        case .delete:
            guard current != nil else { throw CairnError(.notFound, "\(name)/\(id) does not exist") }
            kind = .delete
            payload = nil
        }
        if let newData {
            do throws(ErrorBody) { try table.schema.validate(data: newData) } catch { throw CairnError(error.code, error.message) }
        }

        if table.isLocalOnly {
            // Never uploaded: the row is all there is.
            if let newData {
                try table.upsert(db, id: id, data: newData, version: 0, updatedAt: nil, updatedBy: nil)
            } else {
                try table.remove(db, id: id)
            }
            return newData.map { VisibleRow(id: id, data: $0, version: 0, pending: false, updatedAt: nil, updatedBy: nil).record }
        }

        // The server state these changes build on, kept until every change is uploaded.
        let base = try shadows.begin(db, table: table, id: id, row: current)
        let outcome = try queue.enqueue(
            db, collection: name, id: id, QueueCombiner.Change(kind, payload), base: base, localData: newData ?? [:],
            combining: configuration.combining, changeSet: changeSet, options: options,
            references: table.schema.referenceFields.compactMap { field in
                guard let target = field.collection, case .string(let targetID)? = payload?[field.name] else { return nil }
                return (target, targetID)
            }, at: now)

        let version = current?.version ?? 0
        if let newData {
            try table.upsert(db, id: id, data: newData, version: version, updatedAt: current?.updatedAt, updatedBy: current?.updatedBy)
        } else {
            try table.remove(db, id: id)
        }
        try files.applyFileOverlays(db, table: table, ids: [id])
        if case .remove = outcome, try LocalChanges.ids(db, collection: name, among: [id]).isEmpty {
            // The changes cancelled out: show the server's state again.
            try rebuildVisible(db, table: table, id: id)
            return try table.row(db, id: id)?.record
        }
        return newData.map {
            VisibleRow(id: id, data: $0, version: version, pending: true, updatedAt: current?.updatedAt, updatedBy: current?.updatedBy).record
        }
    }
}
