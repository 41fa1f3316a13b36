import CairnProtocol
import Foundation
import GRDB

/// The uploads the server rejected (`cairn_failed`), kept with their payload and reason until the app retries or
/// discards them.
struct FailedTable: StoreTable {
    var tableNames: [String] { ["cairn_failed"] }

    /// Its part of the first migration.
    static func createV1(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_failed (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                op_id TEXT NOT NULL,
                collection TEXT NOT NULL,
                record_id TEXT NOT NULL,
                op TEXT NOT NULL,
                base_version INTEGER,
                data TEXT,
                error_code TEXT NOT NULL,
                error_message TEXT NOT NULL,
                failed_at REAL NOT NULL
            );
            CREATE INDEX cairn_failed_record ON cairn_failed(collection, record_id);
            """)
    }

    /// Migration v4: the server's error details are kept too.
    static func addDetailsV4(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE cairn_failed ADD COLUMN error_details TEXT")
    }

    /// Migration v7: a failed upload may belong to a change set, which fails, retries and is discarded as one.
    static func addChangeSetsV7(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE cairn_failed ADD COLUMN change_set TEXT;
            CREATE INDEX cairn_failed_change_set ON cairn_failed(change_set) WHERE change_set IS NOT NULL;
            """)
    }

    /// Migration v11: a failed upload keeps the options it was written with, and a retry queues it with them.
    static func addWriteOptionsV11(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE cairn_failed ADD COLUMN upload_group TEXT;
            ALTER TABLE cairn_failed ADD COLUMN custom_tag TEXT;
            ALTER TABLE cairn_failed ADD COLUMN headers TEXT;
            """)
    }

    /// Keeps a rejected upload with the server's reason (and its change set and write options, if any).
    func add(_ db: Database, _ operation: PendingOperation, error: ErrorBody, at date: Date) throws {
        try db.cachedStatement(sql: """
            INSERT INTO cairn_failed (op_id, collection, record_id, op, base_version, data, error_code, error_message, error_details, failed_at,
                                      change_set, upload_group, custom_tag, headers)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [operation.opId, operation.collection, operation.recordID, operation.kind.rawValue, operation.baseVersion,
                                     operation.dataText, error.code.rawValue, error.message, error.details.map { JSONValue.object($0).jsonText() },
                                     date.timeIntervalSince1970, operation.changeSet, operation.uploadGroup, operation.customTag,
                                     operation.options.headersText])
    }

    /// The failed upload with this id: for a change set (any of its operations' ids), the set's one entry.
    func operation(_ db: Database, id: Int64) throws -> FailedOperation? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM cairn_failed WHERE id = ?", arguments: [id]) else { return nil }
        let operation = FailedOperation(row: row)
        guard let changeSet = operation.changeSet else { return operation }
        return try Self.entries(
            Row.fetchAll(db, sql: "SELECT * FROM cairn_failed WHERE change_set = ? ORDER BY id", arguments: [changeSet]).map(FailedOperation.init(row:))
        ).first
    }

    /// A record's failed uploads, oldest first, each on its own (a change set's operations one by one).
    func operations(_ db: Database, collection: String, id: String) throws -> [FailedOperation] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM cairn_failed WHERE collection = ? AND record_id = ? ORDER BY id"),
                         arguments: [collection, id]).map(FailedOperation.init(row:))
    }

    /// Every failed upload, oldest first; a change set is one entry.
    func all(_ db: Database) throws -> [FailedOperation] {
        try Self.entries(Row.fetchAll(db, sql: "SELECT * FROM cairn_failed ORDER BY id").map(FailedOperation.init(row:)))
    }

    /// Failed operations in order, with each change set's operations gathered into one entry at the place of its first:
    /// the entry describes the operation that made the set fail (the first whose error is not `batch_aborted`) and
    /// lists them all in ``FailedOperation/changeSetOperations``.
    static func entries(_ operations: [FailedOperation]) -> [FailedOperation] {
        let sets = Dictionary(grouping: operations.filter { $0.changeSet != nil }, by: { $0.changeSet! })
        var entries: [FailedOperation] = []
        for operation in operations {
            guard let changeSet = operation.changeSet else {
                entries.append(operation)
                continue
            }
            guard let members = sets[changeSet], members.first?.id == operation.id else { continue }
            var entry = members.first { $0.error.code != .batchAborted } ?? operation
            entry.changeSetOperations = members
            entries.append(entry)
        }
        return entries
    }

    /// How many uploads failed; a change set counts once.
    func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM cairn_failed WHERE change_set IS NULL) + count(DISTINCT change_set) FROM cairn_failed") ?? 0
    }

    /// Forgets one failed upload.
    func remove(_ db: Database, id: Int64) throws {
        try db.execute(sql: "DELETE FROM cairn_failed WHERE id = ?", arguments: [id])
    }

    /// Forgets every failed upload of a record.
    func removeAll(_ db: Database, collection: String, id: String) throws {
        try db.execute(sql: "DELETE FROM cairn_failed WHERE collection = ? AND record_id = ?", arguments: [collection, id])
    }
}

extension FailedOperation {
    /// A row of `cairn_failed`.
    init(row: Row) {
        let opText: String = row["op"]
        self.init(
            id: row["id"], opId: row["op_id"], collection: row["collection"], recordID: row["record_id"],
            kind: OperationKind(rawValue: opText) ?? .update, baseVersion: row["base_version"], data: decodeObject(row["data"]),
            error: ErrorBody(code: ErrorCode(rawValue: row["error_code"]), message: row["error_message"], details: decodeObject(row["error_details"])),
            failedAt: Date(timeIntervalSince1970: row["failed_at"]), changeSet: row["change_set"],
            options: WriteOptions(uploadGroup: row["upload_group"], customTag: row["custom_tag"], headers: WriteOptions.headers(fromText: row["headers"])))
    }
}
