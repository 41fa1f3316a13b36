import CairnProtocol
import Foundation
import GRDB

extension PendingOperation {
    /// Selects queued changes with their attempt counts, in the column order `init(row:)` reads; `q` is the queue.
    /// Append `WHERE`/`ORDER BY` clauses.
    static let selectSQL = """
        SELECT q.seq, q.op_id, q.collection, q.record_id, q.op, q.base_version, q.data, coalesce(a.count, 0), q.created_at, q.waits_for
        FROM cairn_queue AS q LEFT JOIN cairn_attempts AS a ON a.seq = q.seq
        """

    /// A row of ``selectSQL`` (read by position: a batch reads thousands).
    init(row: Row) {
        let opText: String = row[4]
        self.init(
            sequence: row[0], opId: row[1], collection: row[2], recordID: row[3],
            kind: OperationKind(rawValue: opText) ?? .update, baseVersion: row[5], dataText: row[6],
            attempts: row[7], createdAt: Date(timeIntervalSince1970: row[8]), waitsFor: row[9])
    }

    /// The newest queued change of a record.
    static func fetchLatest(_ db: Database, collection: String, id: String) throws -> PendingOperation? {
        try Row.fetchOne(db.cachedStatement(sql: selectSQL + " WHERE q.collection = ? AND q.record_id = ? ORDER BY q.seq DESC LIMIT 1"),
                         arguments: [collection, id]).map(PendingOperation.init(row:))
    }

    /// A record's queued changes, oldest first.
    static func fetchAll(_ db: Database, collection: String, id: String) throws -> [PendingOperation] {
        try Row.fetchAll(db, sql: selectSQL + " WHERE q.collection = ? AND q.record_id = ? ORDER BY q.seq",
                         arguments: [collection, id]).map(PendingOperation.init(row:))
    }

    /// Every queued change, oldest first.
    static func fetchAll(_ db: Database) throws -> [PendingOperation] {
        try Row.fetchAll(db, sql: selectSQL + " ORDER BY q.seq").map(PendingOperation.init(row:))
    }
}

extension FailedOperation {
    init(row: Row) {
        let opText: String = row["op"]
        self.init(
            id: row["id"], opId: row["op_id"], collection: row["collection"], recordID: row["record_id"],
            kind: OperationKind(rawValue: opText) ?? .update, baseVersion: row["base_version"], data: decodeObject(row["data"]),
            error: ErrorBody(code: ErrorCode(rawValue: row["error_code"]), message: row["error_message"]),
            failedAt: Date(timeIntervalSince1970: row["failed_at"]))
    }

    static func fetchAll(_ db: Database, collection: String, id: String) throws -> [FailedOperation] {
        try Row.fetchAll(db, sql: "SELECT * FROM cairn_failed WHERE collection = ? AND record_id = ? ORDER BY id",
                         arguments: [collection, id]).map(FailedOperation.init(row:))
    }

    static func fetchAll(_ db: Database) throws -> [FailedOperation] {
        try Row.fetchAll(db, sql: "SELECT * FROM cairn_failed ORDER BY id").map(FailedOperation.init(row:))
    }
}
