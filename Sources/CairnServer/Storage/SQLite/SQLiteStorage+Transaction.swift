import CairnProtocol
import CairnSQL
import Foundation
import GRDB
import Synchronization

extension SQLiteStorage {
    /// The same reads on a reader's WAL snapshot, without the gate.
    public func readCommitted(project: String, _ reads: TransactionReads) async throws -> TransactionSnapshot {
        let lists = SQLiteReadLists(reads)
        return try await pool.read { db in try lists.snapshot(db, project: project) }
    }

    /// Holds the gate for the whole transaction; `BEGIN IMMEDIATE` takes SQLite's write lock at the first access.
    /// Writes wait in the transaction until its next read or the commit, so a batch costs two accesses (its one
    /// read and the commit), not one per record.
    public func withProjectWriteTransaction<T: Sendable>(
        project: String, _ body: (any ProjectWriteTransaction) async throws -> TransactionEnd<T>
    ) async throws -> T {
        try await gate.withLock {
            let transaction = SQLiteWriteTransaction(project: project, pool: pool)
            do {
                switch try await body(transaction) {
                case .commit(let value):
                    try await transaction.commit()
                    return value
                case .rollback(let value):
                    try await transaction.rollback()
                    return value
                }
            } catch {
                try? await transaction.rollback()
                throw error
            }
        }
    }
}

/// A project write transaction on the SQLite writer connection, open across several accesses.
final class SQLiteWriteTransaction: ProjectWriteTransaction {
    let project: String
    private let pool: DatabasePool
    private let pending = Mutex<[PendingWrite]>([])

    /// A write waiting for the next access.
    private enum PendingWrite {
        case record(RecordRow, collection: String, changedAt: Double)
        case operation(RememberedOperation, createdAt: Double)
        case head(Int64)
    }

    init(project: String, pool: DatabasePool) {
        self.project = project
        self.pool = pool
    }

    func read(_ reads: TransactionReads) async throws -> TransactionSnapshot {
        let lists = SQLiteReadLists(reads)
        return try await access { db, project in try lists.snapshot(db, project: project) }
    }

    func versions(_ reads: TransactionReads) async throws -> TransactionVersions {
        let lists = SQLiteReadLists(reads)
        return try await access { db, project in try lists.versions(db, project: project) }
    }

    func liveReferrers(collection: String, field: String, id: String) async throws -> [String] {
        try await access { db, project in
            try String.fetchAll(
                db, sql: """
                    SELECT id FROM records WHERE project = ? AND collection = ? AND deleted = 0 AND json_extract(data, ?) = ?
                    AND json_type(data, ?) = 'text' ORDER BY id
                    """, arguments: [project, collection, "$.\(field)", id, "$.\(field)"])
        }
    }

    func setHeadVersion(_ version: Int64) async throws { pending.withLock { $0.append(.head(version)) } }

    func rememberOperation(_ operation: RememberedOperation, at time: Date) async throws {
        pending.withLock { $0.append(.operation(operation, createdAt: time.epochSeconds)) }
    }

    func writeRecord(_ row: RecordRow, collection: String, changedAt: Date) async throws {
        pending.withLock { $0.append(.record(row, collection: collection, changedAt: changedAt.epochSeconds)) }
    }

    /// Writes what waits and commits; a transaction that never accessed the database has nothing to commit.
    func commit() async throws {
        try await access { db, _ in
            if db.isInsideTransaction { try db.commit() }
        }
    }

    /// Drops what waits and rolls back. Runs in its own task, so a cancelled caller still ends the transaction.
    func rollback() async throws {
        pending.withLock { $0.removeAll() }
        try await Task {
            try await pool.writeWithoutTransaction { db in
                if db.isInsideTransaction { try db.rollback() }
            }
        }.value
    }

    /// One access in the transaction: begins it if needed, writes what waits, then runs `body`.
    private func access<T: Sendable>(_ body: @Sendable (Database, String) throws -> T) async throws -> T {
        let writes = pending.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        let project = project
        return try await pool.writeWithoutTransaction { db in
            if !db.isInsideTransaction { try db.beginTransaction(.immediate) }
            try Self.apply(writes, db, project: project)
            return try body(db, project)
        }
    }

    /// Executes pending writes, in order.
    private static func apply(_ writes: [PendingWrite], _ db: Database, project: String) throws {
        guard !writes.isEmpty else { return }
        let saveRecord = try BoundStatement(db, sql: """
            INSERT INTO records (
                project, collection, id, version, updated_at, updated_by, changed_at, deleted, data, field_versions, rule_data, prior_version)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)
            ON CONFLICT (project, collection, id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at,
            updated_by = excluded.updated_by, changed_at = excluded.changed_at, deleted = excluded.deleted,
            data = excluded.data, field_versions = excluded.field_versions, rule_data = excluded.rule_data,
            \(RecordPriorState.assignments)
            """)
        let saveOperation = try BoundStatement(
            db, sql: "INSERT INTO operations (project, op_id, fingerprint, result, created_at, tag) VALUES (?, ?, ?, ?, ?, ?)")
        for write in writes {
            switch write {
            case .record(let row, let collection, let changedAt):
                try saveRecord.execute { values in
                    values.bind(project)
                    values.bind(collection)
                    values.bind(row.id)
                    values.bind(row.version)
                    values.bind(row.updatedAt)
                    values.bind(row.updatedBy)
                    values.bind(changedAt)
                    values.bind(row.deleted)
                    values.bind(row.dataText)
                    values.bind(FieldVersionsColumn.encode(row.fieldVersions))
                    values.bind(row.ruleDataText)
                }
            case .operation(let operation, let createdAt):
                try saveOperation.execute { values in
                    values.bind(project)
                    values.bind(operation.opId)
                    values.bind(operation.fingerprint)
                    values.bind(operation.result)
                    values.bind(createdAt)
                    values.bind(operation.tag)
                }
            case .head(let version):
                try db.execute(sql: "UPDATE projects SET head_version = ? WHERE name = ?", arguments: [version, project])
            }
        }
    }
}

/// A ``TransactionReads`` as JSON lists for `json_each`, and the queries that read them: whole rows for a snapshot,
/// or only versions and opIds for a re-check.
private struct SQLiteReadLists: Sendable {
    let opIds: String?
    let records: [String: String]

    init(_ reads: TransactionReads) {
        opIds = reads.opIds.isEmpty ? nil : JSONValue.array(reads.opIds.map { .string($0) }).jsonText()
        records = reads.records.mapValues { ids in JSONValue.array(ids.map { .string($0) }).jsonText() }
    }

    func snapshot(_ db: Database, project: String) throws -> TransactionSnapshot {
        let head = try SQLiteStorage.headVersion(db, project: project)
        var operations: [RememberedOperation] = []
        if let opIds {
            // TEXT compares by bytes: equivalent Unicode spellings are different opIds.
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT op_id, fingerprint, result FROM operations WHERE project = ? AND op_id IN (SELECT value FROM json_each(?))
                """), arguments: [project, opIds])
            while let row = try rows.next() { operations.append(RememberedOperation(opId: row[0], fingerprint: row[1], result: row[2])) }
        }
        var found: [String: [RecordRow]] = [:]
        for (collection, list) in records {
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT id, version, updated_at, updated_by, deleted, data, field_versions, CASE WHEN deleted THEN prior_data END
                FROM records WHERE project = ? AND collection = ? AND id IN (SELECT value FROM json_each(?))
                """), arguments: [project, collection, list])
            var rowsFound: [RecordRow] = []
            while let row = try rows.next() {
                rowsFound.append(RecordRow(
                    id: row[0], version: row[1], updatedAt: row[2], updatedBy: row[3], deleted: row[4], dataText: row[5],
                    fieldVersions: try FieldVersionsColumn.decode(row[6]), priorDataText: row[7]))
            }
            found[collection] = rowsFound
        }
        return TransactionSnapshot(headVersion: head, operations: operations, records: found)
    }

    func versions(_ db: Database, project: String) throws -> TransactionVersions {
        let head = try SQLiteStorage.headVersion(db, project: project)
        var operations: Set<[UInt8]> = []
        if let opIds {
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT op_id FROM operations WHERE project = ? AND op_id IN (SELECT value FROM json_each(?))
                """), arguments: [project, opIds])
            while let row = try rows.next() { operations.insert(Array((row[0] as String).utf8)) }
        }
        var found: [String: [String: Int64]] = [:]
        for (collection, list) in records {
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT id, version FROM records WHERE project = ? AND collection = ? AND id IN (SELECT value FROM json_each(?))
                """), arguments: [project, collection, list])
            var versions: [String: Int64] = [:]
            while let row = try rows.next() { versions[row[0]] = row[1] }
            found[collection] = versions
        }
        return TransactionVersions(headVersion: head, operations: operations, records: found)
    }
}
