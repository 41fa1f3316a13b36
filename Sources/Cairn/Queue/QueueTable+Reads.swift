import CairnProtocol
import Foundation
import GRDB

extension QueueTable {
    /// Selects queued changes with their attempt counts, in the column order `PendingOperation(row:)` reads; `q` is
    /// the queue. Append `WHERE`/`ORDER BY` clauses.
    static let selectSQL = """
        SELECT q.seq, q.op_id, q.collection, q.record_id, q.op, q.base_version, q.data, coalesce(a.count, 0), q.created_at, q.waits_for, q.change_set,
               q.schema_version, q.upload_group, q.custom_tag, q.headers
        FROM cairn_queue AS q LEFT JOIN cairn_attempts AS a ON a.seq = q.seq
        """

    /// The newest queued change of a record.
    func newest(_ db: Database, collection: String, id: String) throws -> PendingOperation? {
        try Row.fetchOne(db.cachedStatement(sql: Self.selectSQL + " WHERE q.collection = ? AND q.record_id = ? ORDER BY q.seq DESC LIMIT 1"),
                         arguments: [collection, id]).map(PendingOperation.init(row:))
    }

    /// A record's queued changes, oldest first.
    func operations(_ db: Database, collection: String, id: String) throws -> [PendingOperation] {
        try Row.fetchAll(db.cachedStatement(sql: Self.selectSQL + " WHERE q.collection = ? AND q.record_id = ? ORDER BY q.seq"),
                         arguments: [collection, id]).map(PendingOperation.init(row:))
    }

    /// A change set's queued changes, in order.
    func operations(_ db: Database, changeSet: String) throws -> [PendingOperation] {
        try Row.fetchAll(db.cachedStatement(sql: Self.selectSQL + " WHERE q.change_set = ? ORDER BY q.seq"), arguments: [changeSet])
            .map(PendingOperation.init(row:))
    }

    /// The queued change with this opId.
    func operation(_ db: Database, opId: String) throws -> PendingOperation? {
        try Row.fetchOne(db, sql: Self.selectSQL + " WHERE q.op_id = ?", arguments: [opId]).map(PendingOperation.init(row:))
    }

    /// Every queued change, oldest first.
    func all(_ db: Database) throws -> [PendingOperation] {
        try Row.fetchAll(db, sql: Self.selectSQL + " ORDER BY q.seq").map(PendingOperation.init(row:))
    }

    /// How many changes are queued.
    func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM cairn_queue") ?? 0
    }

    /// When the oldest queued change was made.
    func oldestCreatedAt(_ db: Database) throws -> Date? {
        try Double.fetchOne(db, sql: "SELECT MIN(created_at) FROM cairn_queue").map(Date.init(timeIntervalSince1970:))
    }
}

extension PendingOperation {
    /// A row of ``QueueTable/selectSQL`` (read by position: a batch reads thousands).
    init(row: Row) {
        let opText: String = row[4]
        self.init(
            sequence: row[0], opId: row[1], collection: row[2], recordID: row[3],
            kind: OperationKind(rawValue: opText) ?? .update, baseVersion: row[5], dataText: row[6],
            attempts: row[7], createdAt: Date(timeIntervalSince1970: row[8]), waitsFor: row[9], changeSet: row[10], schemaVersion: row[11],
            uploadGroup: row[12], customTag: row[13], headers: WriteOptions.headers(fromText: row[14]))
    }
}
