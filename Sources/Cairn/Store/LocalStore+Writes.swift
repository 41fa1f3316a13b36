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

/// The server state a record's local changes were made on, and the latest server state known.
struct Shadow: Sendable {
    var baseVersion: Int64?
    var baseData: [String: JSONValue]?
    var serverVersion: Int64?
    var serverData: [String: JSONValue]?

    static func fetch(_ db: Database, _ collection: String, _ id: String) throws -> Shadow? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT base_version, base_data, base_deleted, server_version, server_data, server_deleted FROM cairn_shadow WHERE collection = ? AND record_id = ?"),
            arguments: [collection, id]
        ).map { row in
            let baseDeleted: Bool = row[2], serverDeleted: Bool = row[5]
            return Shadow(
                baseVersion: row[0], baseData: baseDeleted ? nil : decodeObject(row[1]),
                serverVersion: row[3], serverData: serverDeleted ? nil : decodeObject(row[4]))
        }
    }

    func save(_ db: Database, _ collection: String, _ id: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO cairn_shadow (collection, record_id, base_version, base_data, base_deleted, server_version, server_data, server_deleted)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (collection, record_id) DO UPDATE SET base_version = excluded.base_version, base_data = excluded.base_data,
                base_deleted = excluded.base_deleted, server_version = excluded.server_version, server_data = excluded.server_data,
                server_deleted = excluded.server_deleted
                """
        ).execute(
            arguments: [collection, id, baseVersion, baseData.map { JSONValue.object($0).jsonText() }, baseData == nil,
                        serverVersion, serverData.map { JSONValue.object($0).jsonText() }, serverData == nil])
    }

    static func delete(_ db: Database, _ collection: String, _ id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM cairn_shadow WHERE collection = ? AND record_id = ?").execute(arguments: [collection, id])
    }
}

func decodeObject(_ text: String?) -> [String: JSONValue]? {
    guard let text else { return nil }
    return (try? JSONValue(parsing: Array(text.utf8)))?.objectValue
}

extension LocalStore {
    /// Applies a local write and queues its upload in one transaction: once this returns, the change survives a crash.
    @discardableResult
    func write(collection name: String, id: String, change: LocalChange, now: Date = Date()) throws -> LocalRecord? {
        try writer.write { db in try write(db, collection: name, id: id, change: change, now: now) }
    }

    /// Applies a local write inside the caller's transaction.
    func write(_ db: Database, collection name: String, id: String, change: LocalChange, now: Date = Date()) throws -> LocalRecord? {
        let collection = try self.collection(name)
        guard Names.isValidID(id) else { throw CairnError.invalid("id \"\(id)\" must be 1-128 characters of [A-Za-z0-9_.:-]") }
        let table = CollectionTable(schema: collection)
        do {
            let visible = try table.row(db, id: id)
            let kind: OperationKind
            var newData: [String: JSONValue]?
            switch change {
            case .create(let data):
                guard visible == nil else { throw CairnError(.alreadyExists, "\(name)/\(id) already exists") }
                kind = .create
                newData = data.filter { !$0.value.isNull }
            case .save(let data):
                kind = visible == nil ? .create : .update
                newData = data.filter { !$0.value.isNull }
            case .patch(let patch):
                guard let visible else { throw CairnError(.notFound, "\(name)/\(id) does not exist") }
                kind = .patch
                var merged = visible.data
                JSONValue.merge(&merged, patch)
                newData = merged
            case .delete:
                guard visible != nil else { throw CairnError(.notFound, "\(name)/\(id) does not exist") }
                kind = .delete
            }
            if let newData {
                do throws(ErrorBody) { try collection.validate(data: newData) } catch { throw CairnError(error.code, error.message) }
            }

            // The server state these changes build on, kept until every change is uploaded.
            var shadow = try Shadow.fetch(db, name, id)
            if shadow == nil {
                let known = visible.flatMap { $0.version > 0 ? $0 : nil }
                shadow = Shadow(baseVersion: known?.version, baseData: known?.data, serverVersion: known?.version, serverData: known?.data)
                try shadow!.save(db, name, id)
            }

            let payload: [String: JSONValue]? = {
                switch change {
                case .patch(let patch): return patch
                case .delete: return nil
                case .create(let data), .save(let data): return data.filter { !$0.value.isNull }
                }
            }()
            let latest = try PendingOperation.fetchLatest(db, collection: name, id: id)
            let combinable = latest.flatMap { $0.attempts == 0 ? $0 : nil }
            let outcome = QueueCombiner.combine(
                combinable.map { QueueCombiner.Change($0.kind, $0.data) }, QueueCombiner.Change(kind, payload), localData: newData ?? [:])
            switch outcome {
            case .replace(let combined):
                try db.execute(
                    sql: "UPDATE cairn_queue SET op = ?, data = ?, base_version = ? WHERE seq = ?",
                    arguments: [combined.kind.rawValue, combined.data.map { JSONValue.object($0).jsonText() },
                                combined.kind == .create || combinable!.waitsFor != nil ? nil : combinable!.baseVersion ?? shadow?.baseVersion,
                                combinable!.sequence])
            case .remove:
                try db.execute(sql: "DELETE FROM cairn_queue WHERE seq = ?", arguments: [combinable!.sequence])
            case .append(let appended):
                let waitsFor = latest.map(\.opId)
                try db.cachedStatement(
                    sql: "INSERT INTO cairn_queue (op_id, collection, record_id, op, base_version, data, created_at, waits_for) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                ).execute(
                    arguments: [OperationID.make(), name, id, appended.kind.rawValue,
                                waitsFor == nil && appended.kind != .create ? shadow?.baseVersion : nil,
                                appended.data.map { JSONValue.object($0).jsonText() }, now.timeIntervalSince1970, waitsFor])
            }

            if let newData {
                try table.upsert(db, id: id, data: newData, version: visible?.version ?? 0, pending: true,
                                 updatedAt: visible?.updatedAt, updatedBy: visible?.updatedBy)
            } else {
                try table.remove(db, id: id)
            }
            if case .remove = outcome, try !Self.hasLocalChanges(db, collection: name, id: id) {
                // The changes cancelled out: show the server's state again.
                try rebuildVisible(db, table: table, id: id)
                return try table.row(db, id: id)?.record
            }
            return newData.map {
                VisibleRow(id: id, data: $0, version: visible?.version ?? 0, pending: true, updatedAt: visible?.updatedAt, updatedBy: visible?.updatedBy).record
            }
        }
    }

    /// True when the record has queued or failed changes.
    static func hasLocalChanges(_ db: Database, collection: String, id: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: """
            SELECT EXISTS (SELECT 1 FROM cairn_queue WHERE collection = ?1 AND record_id = ?2)
                OR EXISTS (SELECT 1 FROM cairn_failed WHERE collection = ?1 AND record_id = ?2)
            """), arguments: [collection, id]) ?? false
    }

    /// Recomputes a record's visible row: the latest server state known, with its remaining failed and queued
    /// changes applied in order. Drops the shadow when no local change remains.
    func rebuildVisible(_ db: Database, table: CollectionTable, id: String) throws {
        guard let shadow = try Shadow.fetch(db, table.name, id) else { return }
        var data = shadow.serverData
        let failed = try FailedOperation.fetchAll(db, collection: table.name, id: id).map { ($0.kind, $0.data) }
        let queued = try PendingOperation.fetchAll(db, collection: table.name, id: id).map { ($0.kind, $0.data) }
        let changes = failed + queued
        for (kind, payload) in changes {
            switch kind {
            case .create, .update: data = payload ?? [:]
            case .patch: data = QueueCombiner.merged(data ?? [:], payload)
            case .delete: data = nil
            }
        }
        let current = try table.row(db, id: id)
        if let data {
            try table.upsert(db, id: id, data: data, version: shadow.serverVersion ?? 0, pending: !changes.isEmpty,
                             updatedAt: current?.updatedAt, updatedBy: current?.updatedBy)
        } else {
            try table.remove(db, id: id)
        }
        if changes.isEmpty { try Shadow.delete(db, table.name, id) }
    }
}
