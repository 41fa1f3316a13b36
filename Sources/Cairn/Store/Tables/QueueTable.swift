import CairnProtocol
import Foundation
import GRDB

/// The durable upload queue (`cairn_queue`) and the attempt counts of its entries (`cairn_attempts`).
///
/// Every change enters through ``enqueue(_:collection:id:_:base:localData:combining:at:)``, which holds the one
/// base-version rule; every change waiting for an earlier upload of its record leaves that wait through
/// ``release(_:_:)``.
struct QueueTable: StoreTable {
    var tableNames: [String] { ["cairn_queue", "cairn_attempts"] }

    // MARK: Migrations

    /// Its part of the first migration.
    static func createV1(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_queue (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                op_id TEXT NOT NULL UNIQUE,
                collection TEXT NOT NULL,
                record_id TEXT NOT NULL,
                op TEXT NOT NULL,
                base_version INTEGER,
                data TEXT,
                attempts INTEGER NOT NULL DEFAULT 0,
                created_at REAL NOT NULL,
                waits_for TEXT
            );
            CREATE INDEX cairn_queue_record ON cairn_queue(collection, record_id);
            CREATE INDEX cairn_queue_waits ON cairn_queue(waits_for) WHERE waits_for IS NOT NULL;
            """)
    }

    /// Marking a batch attempted used to rewrite each queued row with its payload; a small table of its own makes
    /// that a few pages.
    static func moveAttemptsApart(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_attempts (seq INTEGER PRIMARY KEY NOT NULL, count INTEGER NOT NULL);
            INSERT INTO cairn_attempts (seq, count) SELECT seq, attempts FROM cairn_queue WHERE attempts > 0;
            ALTER TABLE cairn_queue DROP COLUMN attempts;
            CREATE TRIGGER cairn_queue_forget_attempts AFTER DELETE ON cairn_queue
            BEGIN DELETE FROM cairn_attempts WHERE seq = old.seq; END;
            """)
    }

    // MARK: The base-version rule

    /// The base version a queued change is uploaded with: a create has none; a change that waits for an earlier
    /// upload of its record learns its base when that upload is answered (``release(_:_:)``); any other change
    /// builds on `known`, the server version its record's local changes were made on.
    ///
    /// ``release(_:_:)`` applies the same rule in SQL.
    static func baseVersion(of kind: OperationKind, waitsFor: String?, known: Int64?) -> Int64? {
        kind == .create || waitsFor != nil ? nil : known
    }

    // MARK: Enqueue and release

    /// Queues a change of a record in the caller's transaction, and says what happened to the queue.
    ///
    /// With `combining`, the change is folded into the record's newest queued change when that one was never
    /// attempted (``QueueCombiner``); otherwise it is appended after it, waiting for it (`waits_for`).
    /// - Parameters:
    ///   - base: the server version the record's local changes were made on (the shadow's base version).
    ///   - localData: the record's data once the change is applied locally (for combining two patches).
    @discardableResult
    func enqueue(
        _ db: Database, collection: String, id: String, _ change: QueueCombiner.Change, base: Int64?,
        localData: [String: JSONValue] = [:], combining: Bool, at date: Date
    ) throws -> QueueCombiner.Outcome {
        let newest = try newest(db, collection: collection, id: id)
        let combinable = combining ? newest.flatMap { $0.attempts == 0 ? $0 : nil } : nil
        let outcome = QueueCombiner.combine(combinable.map { QueueCombiner.Change($0.kind, $0.data) }, change, localData: localData)
        switch outcome {
        case .replace(let combined):
            let queued = combinable!
            try db.cachedStatement(sql: "UPDATE cairn_queue SET op = ?, data = ?, base_version = ? WHERE seq = ?").execute(arguments: [
                combined.kind.rawValue, jsonText(combined.data),
                Self.baseVersion(of: combined.kind, waitsFor: queued.waitsFor, known: queued.baseVersion ?? base), queued.sequence,
            ])
        case .remove:
            try remove(db, sequence: combinable!.sequence)
        case .append(let appended):
            let waitsFor = newest?.opId
            try db.cachedStatement(sql: """
                INSERT INTO cairn_queue (op_id, collection, record_id, op, base_version, data, created_at, waits_for)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [
                OperationID.make(), collection, id, appended.kind.rawValue, Self.baseVersion(of: appended.kind, waitsFor: waitsFor, known: base),
                jsonText(appended.data), date.timeIntervalSince1970, waitsFor,
            ])
        }
        return outcome
    }

    /// The end of a wait: the change queued on top of `opId` builds on `baseVersion` now, or, with `next`, waits
    /// for that earlier change instead.
    struct Release: Sendable, Hashable {
        var opId: String
        var baseVersion: Int64?
        var next: String?
    }

    /// Ends the waits of the changes queued on top of these operations, in one statement.
    func release(_ db: Database, _ releases: [Release]) throws {
        guard !releases.isEmpty else { return }
        let rows = JSONValue.array(releases.map { release in
            .array([.string(release.opId), release.baseVersion.map(JSONValue.integer) ?? .null, release.next.map(JSONValue.string) ?? .null])
        })
        // `baseVersion(of:waitsFor:known:)` in SQL.
        try db.cachedStatement(sql: """
            UPDATE cairn_queue SET waits_for = w.next,
                   base_version = CASE WHEN cairn_queue.op = 'create' OR w.next IS NOT NULL THEN NULL ELSE w.version END
            FROM (SELECT value ->> '$[0]' AS op_id, value ->> '$[1]' AS version, value ->> '$[2]' AS next FROM json_each(?)) AS w
            WHERE cairn_queue.waits_for = w.op_id
            """).execute(arguments: [rows.jsonText()])
    }

    // MARK: Removing

    /// Replaces the data of a queued change before its first upload (file fields holding local file ids).
    func setData(_ db: Database, sequence: Int64, dataText: String) throws {
        try db.cachedStatement(sql: "UPDATE cairn_queue SET data = ? WHERE seq = ?").execute(arguments: [dataText, sequence])
    }

    /// Removes one queued change (its attempt count goes with it).
    func remove(_ db: Database, sequence: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM cairn_queue WHERE seq = ?").execute(arguments: [sequence])
    }

    /// Removes these queued changes in one statement.
    func remove(_ db: Database, sequences: [Int64]) throws {
        try db.cachedStatement(sql: "DELETE FROM cairn_queue WHERE seq IN (SELECT value FROM json_each(?))")
            .execute(arguments: [JSONValue.array(sequences.map(JSONValue.integer)).jsonText()])
    }

    /// Removes every queued change of a record.
    func removeAll(_ db: Database, collection: String, id: String) throws {
        try db.execute(sql: "DELETE FROM cairn_queue WHERE collection = ? AND record_id = ?", arguments: [collection, id])
    }

    // MARK: Uploading

    /// Up to `limit` changes ready to upload (waiting for nothing, the oldest of their record), oldest first, after
    /// position `after`; counts an attempt for each, so they are never changed again.
    func takeReady(_ db: Database, limit: Int, after: Int64) throws -> [PendingOperation] {
        let rows = try Row.fetchAll(db.cachedStatement(sql: Self.selectSQL + """
             WHERE q.seq > ? AND q.waits_for IS NULL
              AND q.seq = (SELECT min(seq) FROM cairn_queue WHERE collection = q.collection AND record_id = q.record_id)
            ORDER BY q.seq LIMIT ?
            """), arguments: [after, limit])
        var operations = rows.map(PendingOperation.init(row:))
        try db.cachedStatement(sql: """
            INSERT INTO cairn_attempts (seq, count) SELECT value, 1 FROM json_each(?) WHERE true
            ON CONFLICT (seq) DO UPDATE SET count = count + 1
            """).execute(arguments: [JSONValue.array(operations.map { .integer($0.sequence) }).jsonText()])
        for index in operations.indices { operations[index].attempts += 1 }
        return operations
    }
}
