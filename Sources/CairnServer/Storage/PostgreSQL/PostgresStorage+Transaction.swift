import CairnProtocol
import Foundation
import Logging
import PostgresNIO
import Synchronization

extension PostgresStorage {
    /// Begins a transaction on one pooled connection and locks the project's row (`SELECT ... FOR UPDATE`) before
    /// `body` runs, so writers of a project run one at a time whatever instance they reach. The lock is held until
    /// `COMMIT` or `ROLLBACK`; see ``PostgresWriteTransaction`` for why the feed stays gap-free.
    public func withProjectWriteTransaction<T: Sendable>(
        project: String, _ body: (any ProjectWriteTransaction) async throws -> TransactionEnd<T>
    ) async throws -> T {
        try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            let transaction: PostgresWriteTransaction
            do {
                transaction = try await PostgresWriteTransaction.begin(project: project, connection: connection, logger: logger)
            } catch {
                await Self.rollback(connection, logger: logger)
                throw error
            }
            do {
                switch try await body(transaction) {
                case .commit(let value):
                    try await transaction.flush()
                    try await connection.query("COMMIT", logger: logger)
                    return value
                case .rollback(let value):
                    await Self.rollback(connection, logger: logger)
                    return value
                }
            } catch {
                await Self.rollback(connection, logger: logger)
                throw error
            }
        }
    }

    /// The same reads outside a transaction: the head first, then the rows, each statement its own snapshot (a row
    /// committed after the head was read has a higher version).
    public func readCommitted(project: String, _ reads: TransactionReads) async throws -> TransactionSnapshot {
        try await client.withConnection { connection in
            var head: Int64 = 0
            for try await version in try await connection.query(
                "SELECT head_version FROM projects WHERE name = \(project)", logger: logger
            ).decode(Int64.self) { head = version }
            let (operations, records) = try await PostgresWriteTransaction.rows(reads, project: project, connection: connection, logger: logger)
            return TransactionSnapshot(headVersion: head, operations: operations, records: records)
        }
    }

    /// Rolls back in a task of its own, so a cancelled caller still ends the transaction before the connection
    /// goes back to the pool. A connection that cannot roll back is broken, and the pool drops it.
    static func rollback(_ connection: PostgresConnection, logger: Logger) async {
        _ = try? await Task { try await connection.query("ROLLBACK", logger: logger) }.value
    }
}

/// A project write transaction on one PostgreSQL connection.
///
/// **Why the feed stays gap-free across instances.** The transaction's first statement locks the project's row
/// (`SELECT head_version ... FOR UPDATE`), and it keeps that lock until it commits. Versions are the head read under
/// the lock plus one, so they are handed out in the order the transactions commit. PostgreSQL makes a committed
/// transaction visible to new snapshots before it releases its locks; so when a writer gets the lock, every lower
/// version is already visible to every statement that starts afterwards. A reader whose snapshot shows version `v`
/// therefore also shows every version below `v`: a cursor handed out at `v` has nothing committing behind it.
/// Readers read a feed range and the head in one statement, which is one snapshot.
final class PostgresWriteTransaction: ProjectWriteTransaction {
    let project: String
    private let connection: PostgresConnection
    private let logger: Logger
    /// The head version: read under the lock, then only this transaction changes it.
    private let head: Mutex<Int64>
    /// False for an unknown project, whose head stays 0 (as on SQLite).
    private let projectExists: Bool
    private let pending = Mutex<[PendingWrite]>([])

    /// A write waiting for the next access.
    private enum PendingWrite {
        case record(RecordRow, collection: String, changedAt: Double)
        case operation(RememberedOperation, createdAt: Double)
    }

    private init(project: String, connection: PostgresConnection, logger: Logger, head: Int64?) {
        self.project = project
        self.connection = connection
        self.logger = logger
        self.head = Mutex(head ?? 0)
        self.projectExists = head != nil
    }

    /// Locks the project's row (an unknown project: a transaction-scoped advisory lock on its name instead).
    static func begin(project: String, connection: PostgresConnection, logger: Logger) async throws -> PostgresWriteTransaction {
        var head: Int64?
        for try await version in try await connection.query(
            "SELECT head_version FROM projects WHERE name = \(project) FOR UPDATE", logger: logger
        ).decode(Int64.self) { head = version }
        if head == nil {
            try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\("cairn.project:" + project), 0))", logger: logger)
        }
        return PostgresWriteTransaction(project: project, connection: connection, logger: logger, head: head)
    }

    func read(_ reads: TransactionReads) async throws -> TransactionSnapshot {
        try await flush()
        let (operations, records) = try await Self.rows(reads, project: project, connection: connection, logger: logger)
        return TransactionSnapshot(headVersion: head.withLock { $0 }, operations: operations, records: records)
    }

    func versions(_ reads: TransactionReads) async throws -> TransactionVersions {
        try await flush()
        var operations: Set<[UInt8]> = []
        let opIds = reads.opIds.filter { !PostgresStorage.holdsNUL($0) }
        if !opIds.isEmpty {
            let rows = try await connection.query(
                "SELECT op_id FROM operations WHERE project = \(project) AND op_id = ANY(\(opIds)::text[])", logger: logger)
            for try await opId in rows.decode(String.self) { operations.insert(Array(opId.utf8)) }
        }
        var records: [String: [String: Int64]] = [:]
        for (collection, list) in reads.records {
            records[collection] = [:]
            let ids = list.filter { !PostgresStorage.holdsNUL(collection, $0) }
            guard !ids.isEmpty, !PostgresStorage.holdsNUL(collection) else { continue }
            let rows = try await connection.query(
                """
                SELECT id, version FROM records WHERE project = \(project) AND collection = \(collection) AND id = ANY(\(ids)::text[])
                """, logger: logger)
            for try await (id, version) in rows.decode((String, Int64).self) { records[collection, default: [:]][id] = version }
        }
        return TransactionVersions(headVersion: head.withLock { $0 }, operations: operations, records: records)
    }

    /// The remembered operations and current rows `reads` asks for, on `connection` (in a transaction or not).
    static func rows(
        _ reads: TransactionReads, project: String, connection: PostgresConnection, logger: Logger
    ) async throws -> (operations: [RememberedOperation], records: [String: [RecordRow]]) {
        var operations: [RememberedOperation] = []
        // Keys holding U+0000 were never stored (PostgreSQL text cannot hold it); the batch rejects them itself.
        let opIds = reads.opIds.filter { !PostgresStorage.holdsNUL($0) }
        if !opIds.isEmpty {
            // Text equality compares bytes: equivalent Unicode spellings are different opIds.
            let rows = try await connection.query(
                """
                SELECT op_id, fingerprint, result FROM operations
                WHERE project = \(project) AND op_id = ANY(\(opIds)::text[])
                """, logger: logger)
            for try await (opId, fingerprint, result) in rows.decode((String, String, String).self) {
                operations.append(RememberedOperation(opId: opId, fingerprint: fingerprint, result: result))
            }
        }
        var records: [String: [RecordRow]] = [:]
        for (collection, list) in reads.records {
            records[collection] = []
            let ids = list.filter { !PostgresStorage.holdsNUL(collection, $0) }
            guard !ids.isEmpty, !PostgresStorage.holdsNUL(collection) else { continue }
            // `id = ANY(...)` on the primary key, one collection at a time. A join with the unnested keys was planned
            // as a hash of the whole project while its table grew faster than its statistics: pushes fell from 8,200
            // to 5,300 records a second between a 50,000- and a 100,000-record project; with this, 9,500.
            let rows = try await connection.query(
                """
                SELECT id, version, updated_at, updated_by, deleted, data, field_versions, CASE WHEN deleted THEN prior_data END
                FROM records WHERE project = \(project) AND collection = \(collection) AND id = ANY(\(ids)::text[])
                """, logger: logger)
            for try await (id, version, updatedAt, updatedBy, deleted, data, fields, prior)
                in rows.decode((String, Int64, String, String, Bool, String, String, String?).self)
            {
                records[collection, default: []].append(RecordRow(
                    id: id, version: version, updatedAt: updatedAt, updatedBy: updatedBy, deleted: deleted, dataText: data,
                    fieldVersions: try FieldVersionsColumn.decode(fields), priorDataText: prior))
            }
        }
        return (operations, records)
    }

    func liveReferrers(collection: String, field: String, id: String) async throws -> [String] {
        try await flush()
        guard !PostgresStorage.holdsNUL(collection, id) else { return [] }
        let rows = try await connection.query(
            """
            SELECT id FROM records WHERE project = \(project) AND collection = \(collection) AND NOT deleted
            AND jsonb_typeof(data::jsonb -> \(field)) = 'string' AND (data::jsonb ->> \(field)) = \(id) ORDER BY id COLLATE "C"
            """, logger: logger)
        var ids: [String] = []
        for try await referrer in rows.decode(String.self) { ids.append(referrer) }
        return ids
    }

    func setHeadVersion(_ version: Int64) async throws {
        guard projectExists else { return }
        try await connection.query("UPDATE projects SET head_version = \(version) WHERE name = \(project)", logger: logger)
        head.withLock { $0 = version }
    }

    func rememberOperation(_ operation: RememberedOperation, at time: Date) async throws {
        pending.withLock { $0.append(.operation(operation, createdAt: time.epochSeconds)) }
    }

    func writeRecord(_ row: RecordRow, collection: String, changedAt: Date) async throws {
        pending.withLock { $0.append(.record(row, collection: collection, changedAt: changedAt.epochSeconds)) }
    }

    /// Writes what waits: the records in one statement (the last write of a record wins), the operations in another.
    func flush() async throws {
        let writes = pending.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        guard !writes.isEmpty else { return }
        var latest: [RecordKey: Int] = [:]
        var rows: [(RecordRow, String, Double)] = []
        var operations: [(RememberedOperation, Double)] = []
        for write in writes {
            switch write {
            case .record(let row, let collection, let changedAt):
                let key = RecordKey(collection: collection, id: row.id)
                if let index = latest[key] {
                    rows[index] = (row, collection, changedAt)
                } else {
                    latest[key] = rows.count
                    rows.append((row, collection, changedAt))
                }
            case .operation(let operation, let createdAt):
                operations.append((operation, createdAt))
            }
        }
        if !rows.isEmpty { try await saveRecords(rows) }
        if !operations.isEmpty {
            try await connection.query(
                """
                INSERT INTO operations (project, op_id, fingerprint, result, created_at, tag)
                SELECT \(project), o, f, r, c, NULLIF(t, '') FROM unnest(\(operations.map(\.0.opId))::text[],
                    \(operations.map(\.0.fingerprint))::text[], \(operations.map(\.0.result))::text[], \(operations.map(\.1))::float8[],
                    \(operations.map { $0.0.tag ?? "" })::text[]) AS u(o, f, r, c, t)
                """, logger: logger)
        }
    }

    /// Inserts or replaces rows, as arrays unnested in one statement.
    private func saveRecords(_ rows: [(RecordRow, String, Double)]) async throws {
        try await connection.query(
            """
            INSERT INTO records (
                project, collection, id, version, updated_at, updated_by, changed_at, deleted, data, field_versions, rule_data, prior_version)
            SELECT \(project), c, i, v, ua, ub, ca, d, da, fv, NULLIF(rd, ''), 0
            FROM unnest(\(rows.map(\.1))::text[], \(rows.map(\.0.id))::text[], \(rows.map(\.0.version))::int8[],
                \(rows.map(\.0.updatedAt))::text[], \(rows.map(\.0.updatedBy))::text[], \(rows.map(\.2))::float8[],
                \(rows.map(\.0.deleted))::bool[], \(rows.map(\.0.dataText))::text[],
                \(rows.map { FieldVersionsColumn.encode($0.0.fieldVersions) })::text[], \(rows.map { $0.0.ruleDataText ?? "" })::text[])
                AS u(c, i, v, ua, ub, ca, d, da, fv, rd)
            ON CONFLICT (project, collection, id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at,
                updated_by = excluded.updated_by, changed_at = excluded.changed_at, deleted = excluded.deleted,
                data = excluded.data, field_versions = excluded.field_versions, rule_data = excluded.rule_data,
                \(unescaped: RecordPriorState.assignments)
            """, logger: logger)
    }
}
