import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    /// Up to `limit` queued changes ready to upload, at most one per record, oldest first; marks them attempted
    /// (so they are never changed again and every retry sends the same operation).
    /// - Parameter after: take only positions after this one (the newest already in flight); older changes that
    ///   become ready meanwhile go in a later batch.
    func takeBatch(limit: Int, after: Int64 = 0) throws -> [PendingOperation] {
        try writeBookkeeping { db in
            let rows = try Row.fetchAll(db, sql: PendingOperation.selectSQL + """
                 WHERE q.seq > ? AND q.waits_for IS NULL
                  AND q.seq = (SELECT min(seq) FROM cairn_queue WHERE collection = q.collection AND record_id = q.record_id)
                ORDER BY q.seq LIMIT ?
                """, arguments: [after, limit])
            var operations = rows.map(PendingOperation.init(row:))
            let sequences = JSONValue.array(operations.map { .integer($0.sequence) }).jsonText()
            try db.execute(sql: """
                INSERT INTO cairn_attempts (seq, count) SELECT value, 1 FROM json_each(?) WHERE true
                ON CONFLICT (seq) DO UPDATE SET count = count + 1
                """, arguments: [sequences])
            for index in operations.indices { operations[index].attempts += 1 }
            return operations
        }
    }

    /// Records the server's answers for applied and rejected operations; returns the conflicts to resolve.
    func record(results: [ScannedResult], for operations: [PendingOperation], now: Date = Date()) throws -> [(PendingOperation, ServerRecord)] {
        try writeBookkeeping { db in
            var conflicts: [(PendingOperation, ServerRecord)] = []
            var applied: [(PendingOperation, ScannedResult)] = []
            for (operation, result) in zip(operations, results) {
                switch result.status {
                case .applied:
                    applied.append((operation, result))
                case .rejected:
                    let error = result.error ?? ErrorBody(code: .badResponse, message: "rejected without a reason")
                    try db.execute(sql: """
                        INSERT INTO cairn_failed (op_id, collection, record_id, op, base_version, data, error_code, error_message, failed_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [operation.opId, operation.collection, operation.recordID, operation.kind.rawValue, operation.baseVersion,
                                         operation.dataText, error.code.rawValue, error.message, now.timeIntervalSince1970])
                    try db.execute(sql: "DELETE FROM cairn_queue WHERE seq = ?", arguments: [operation.sequence])
                    let shadow = try Shadow.fetch(db, operation.collection, operation.recordID)
                    try release(db, waitingFor: operation.opId, baseVersion: shadow?.baseVersion)
                case .conflict:
                    guard let current = result.current else { throw CairnError.badResponse("a conflict result carries no current state") }
                    conflicts.append((operation, current))
                }
            }
            try acknowledge(db, applied)
            return conflicts
        }
    }

    /// Uploads were applied: each record's base moves to its committed state. The usual case (a create or update
    /// with nothing else pending for the record) is done for the whole batch in a few statements.
    private func acknowledge(_ db: Database, _ applied: [(PendingOperation, ScannedResult)]) throws {
        guard !applied.isEmpty else { return }
        try db.execute(sql: "DELETE FROM cairn_queue WHERE seq IN (SELECT value FROM json_each(?))",
                       arguments: [JSONValue.array(applied.map { .integer($0.0.sequence) }).jsonText()])
        try db.execute(sql: """
            UPDATE cairn_queue SET waits_for = NULL, base_version = CASE WHEN cairn_queue.op = 'create' THEN NULL ELSE w.version END
            FROM (SELECT value ->> '$[0]' AS op_id, value ->> '$[1]' AS version FROM json_each(?)) AS w
            WHERE cairn_queue.waits_for = w.op_id
            """, arguments: [JSONValue.array(applied.map { .array([.string($0.0.opId), .integer($0.1.version ?? 0)]) }).jsonText()])
        // Which records still hold local changes, and which server versions pulls already brought.
        let keys = JSONValue.array(applied.map { .array([.string($0.0.collection), .string($0.0.recordID)]) }).jsonText()
        let states = try Row.fetchAll(db, sql: """
            SELECT EXISTS (SELECT 1 FROM cairn_queue q WHERE q.collection = k.value ->> '$[0]' AND q.record_id = k.value ->> '$[1]')
                   OR EXISTS (SELECT 1 FROM cairn_failed f WHERE f.collection = k.value ->> '$[0]' AND f.record_id = k.value ->> '$[1]'),
                   (SELECT coalesce(server_version, 0) FROM cairn_shadow s WHERE s.collection = k.value ->> '$[0]' AND s.record_id = k.value ->> '$[1]')
            FROM json_each(?) AS k ORDER BY k.key
            """, arguments: [keys])
        var dates = DateTextCache()
        var quick: [String: [JSONValue]] = [:]
        var tables: [String: CollectionTable] = [:]
        for ((operation, result), state) in zip(applied, states) {
            let table = try tables[operation.collection] ?? CollectionTable(schema: collection(operation.collection))
            tables[operation.collection] = table
            let busy: Bool = state[0]
            let serverVersion: Int64 = state[1] ?? 0
            let version = result.version ?? 0
            if !busy, serverVersion <= version, !result.deleted, operation.kind == .create || operation.kind == .update {
                // A create or update commits exactly the local data: only the sync columns change.
                quick[operation.collection, default: []].append([
                    .string(operation.recordID), .integer(version),
                    result.updatedAt.map { .string(dates.text($0)) } ?? .null, result.updatedBy.map(JSONValue.string) ?? .null,
                ])
            } else {
                let record: ServerRecord
                do {
                    record = try result.appliedRecord(id: operation.recordID)!
                } catch {
                    throw CairnError.badResponse("the applied record of \(operation.opId) could not be read", cause: error)
                }
                try acknowledge(db, table: table, operation: operation, record: record, dates: &dates, hasMoreChanges: busy,
                                serverVersion: serverVersion)
            }
        }
        for (name, rows) in quick {
            let table = tables[name]!
            let text = JSONValue.array(rows).jsonText()
            try db.execute(sql: """
                UPDATE \(table.quotedName) SET cairn_version = c.version, cairn_pending = 0, cairn_updated_at = c.at, cairn_updated_by = c.by
                FROM (SELECT value ->> '$[0]' AS id, value ->> '$[1]' AS version, value ->> '$[2]' AS at, value ->> '$[3]' AS by
                      FROM json_each(?)) AS c
                WHERE \(table.quotedName).id = c.id
                """, arguments: [text])
            try db.execute(sql: """
                DELETE FROM cairn_shadow WHERE collection = ? AND record_id IN (SELECT value ->> '$[0]' FROM json_each(?))
                """, arguments: [name, text])
        }
    }

    /// One applied upload outside the usual case: the record still has changes, a pull brought a newer server
    /// state, it was deleted, or a patch whose committed data may differ from the local data.
    private func acknowledge(
        _ db: Database, table: CollectionTable, operation: PendingOperation, record: ServerRecord, dates: inout DateTextCache,
        hasMoreChanges moreChanges: Bool, serverVersion: Int64
    ) throws {
        if !moreChanges, serverVersion <= record.version {
            // The common case: nothing else is pending for this record, so it shows the committed state.
            try Shadow.delete(db, table.name, operation.recordID)
            if record.deleted {
                try table.remove(db, id: operation.recordID)
                return
            }
            let updatedAt = record.updatedAt.map { dates.text($0) }
            // A create or update commits exactly the local data; a patch may have merged other changes.
            let exact = operation.kind == .create || operation.kind == .update
            try db.cachedStatement(sql: """
                UPDATE \(table.quotedName) SET cairn_version = ?, cairn_pending = 0, cairn_updated_at = ?, cairn_updated_by = ?
                WHERE id = ? AND (? OR cairn_data = ?)
                """).execute(arguments: [record.version, updatedAt, record.updatedBy, operation.recordID, exact,
                                         exact ? "" : JSONValue.object(record.data).jsonText()])
            if db.changesCount == 0 {
                try table.upsert(db, id: operation.recordID, data: record.data, version: record.version, pending: false,
                                 updatedAt: updatedAt, updatedBy: record.updatedBy)
            }
            return
        }
        var shadow = try Shadow.fetch(db, table.name, operation.recordID) ?? Shadow()
        shadow.baseVersion = record.version
        shadow.baseData = record.deleted ? nil : record.data
        if record.version >= (shadow.serverVersion ?? 0) {
            shadow.serverVersion = record.version
            shadow.serverData = shadow.baseData
        }
        try shadow.save(db, table.name, operation.recordID)
        if moreChanges {
            try db.execute(sql: "UPDATE \(table.quotedName) SET cairn_version = ?, cairn_updated_at = ?, cairn_updated_by = ? WHERE id = ?",
                           arguments: [record.version, record.updatedAt.map(RFC3339.string(from:)), record.updatedBy, operation.recordID])
        } else {
            try rebuildVisible(db, table: table, id: operation.recordID)
        }
    }

    /// The change queued after `opId` for the same record can now be uploaded, on `baseVersion`.
    private func release(_ db: Database, waitingFor opId: String, baseVersion: Int64?) throws {
        try db.execute(sql: "UPDATE cairn_queue SET waits_for = NULL, base_version = CASE WHEN op = 'create' THEN NULL ELSE ? END WHERE waits_for = ?",
                       arguments: [baseVersion, opId])
    }

    /// The conflict as a resolver sees it.
    func conflict(for operation: PendingOperation, current: ServerRecord) throws -> Conflict {
        try writer.read { db in
            let shadow = try Shadow.fetch(db, operation.collection, operation.recordID)
            let visible = try CollectionTable(schema: try collection(operation.collection)).row(db, id: operation.recordID)
            return Conflict(collection: operation.collection, id: operation.recordID, base: shadow?.baseData, local: visible?.data,
                            server: current.deleted ? nil : current.data, serverVersion: current.version)
        }
    }

    /// Ends a conflict: records it, replaces the record's queued changes with the resolution (uploaded on top of
    /// the server's version), and shows the resolved state.
    func resolve(_ conflict: Conflict, resolution: Resolution, current: ServerRecord, now: Date = Date()) throws {
        try writer.write { db in
            let table = CollectionTable(schema: try collection(conflict.collection))
            try db.execute(sql: "DELETE FROM cairn_queue WHERE collection = ? AND record_id = ?", arguments: [conflict.collection, conflict.id])
            var shadow = try Shadow.fetch(db, conflict.collection, conflict.id) ?? Shadow()
            shadow.baseVersion = current.version
            shadow.baseData = conflict.server
            if current.version >= (shadow.serverVersion ?? 0) {
                shadow.serverVersion = current.version
                shadow.serverData = conflict.server
            }
            try shadow.save(db, conflict.collection, conflict.id)

            var resolved: [String: JSONValue]?
            var upload: (OperationKind, [String: JSONValue]?)?
            switch resolution {
            case .server:
                resolved = conflict.server
            case .client:
                resolved = conflict.local
                upload = conflict.local.map { (.update, $0) } ?? (conflict.server == nil ? nil : (.delete, nil))
            case .data(let data):
                resolved = data.filter { !$0.value.isNull }
                upload = (.update, resolved)
            case .delete:
                resolved = nil
                upload = conflict.server == nil ? nil : (.delete, nil)
            }
            if let data = resolved {
                do throws(ErrorBody) { try table.schema.validate(data: data) } catch { throw CairnError(error.code, "the resolution of \(conflict.collection)/\(conflict.id) is invalid: \(error.message)") }
            }
            if let (kind, data) = upload {
                try db.execute(
                    sql: "INSERT INTO cairn_queue (op_id, collection, record_id, op, base_version, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    arguments: [OperationID.make(), conflict.collection, conflict.id, kind.rawValue, current.version,
                                data.map { JSONValue.object($0).jsonText() }, now.timeIntervalSince1970])
            }
            try db.execute(sql: """
                INSERT INTO cairn_conflicts (collection, record_id, base, local, server, server_version, resolution, resolved, resolved_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [conflict.collection, conflict.id, conflict.base.map { JSONValue.object($0).jsonText() },
                                 conflict.local.map { JSONValue.object($0).jsonText() }, conflict.server.map { JSONValue.object($0).jsonText() },
                                 conflict.serverVersion,
                                 resolution.name, resolved.map { JSONValue.object($0).jsonText() }, now.timeIntervalSince1970])
            // The server state with the resolution's upload applied: the resolved state.
            try rebuildVisible(db, table: table, id: conflict.id)
        }
    }
}

/// Formats commit times once per distinct date: a batch's results share one.
struct DateTextCache {
    private var last: (Date, String)?

    mutating func text(_ date: Date) -> String {
        if let last, last.0 == date { return last.1 }
        let text = RFC3339.string(from: date)
        last = (date, text)
        return text
    }
}
