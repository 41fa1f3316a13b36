import CairnProtocol
import Foundation
import GRDB

/// The durable upload queue (`cairn_queue`) and the attempt counts of its entries (`cairn_attempts`).
///
/// Every change enters through ``enqueue(_:collection:id:_:base:localData:combining:changeSet:options:at:)``, which holds the one
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

    /// Migration v7: a queued change may belong to a change set, uploaded whole as one atomic batch.
    static func addChangeSetsV7(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE cairn_queue ADD COLUMN change_set TEXT;
            CREATE INDEX cairn_queue_change_set ON cairn_queue(change_set) WHERE change_set IS NOT NULL;
            """)
    }

    /// Migration v-schema: a queued change remembers the schema number of the app build that made it, once a newer
    /// build opened the store (`NULL`: the build's current number).
    static func addSchemaVersion(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE cairn_queue ADD COLUMN schema_version INTEGER")
    }

    /// Migration v11: a queued change keeps the options it was written with (``WriteOptions``): its upload group,
    /// custom tag and headers.
    static func addWriteOptionsV11(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE cairn_queue ADD COLUMN upload_group TEXT;
            ALTER TABLE cairn_queue ADD COLUMN custom_tag TEXT;
            ALTER TABLE cairn_queue ADD COLUMN headers TEXT;
            CREATE INDEX cairn_queue_upload_group ON cairn_queue(upload_group) WHERE upload_group IS NOT NULL;
            """)
    }

    /// Marks the changes queued so far as made for schema number `number` (an app build older than the one opening
    /// the store now), so they are uploaded in that shape and the server translates them.
    func markSchemaVersion(_ db: Database, _ number: Int) throws {
        try db.execute(sql: "UPDATE cairn_queue SET schema_version = ? WHERE schema_version IS NULL", arguments: [number])
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

    /// Whether a change of one of `records` is queued after position `sequence`.
    private func queuedAfter(_ db: Database, _ sequence: Int64, _ records: [(collection: String, id: String)]) throws -> Bool {
        for record in records {
            let last = try Int64.fetchOne(
                db, sql: "SELECT max(seq) FROM cairn_queue WHERE collection = ? AND record_id = ?", arguments: [record.collection, record.id])
            if let last, last > sequence { return true }
        }
        return false
    }

    /// Queues a change of a record in the caller's transaction, and says what happened to the queue.
    ///
    /// The change is folded into the record's newest queued change when `combining` allows its kind
    /// (``QueueCombining``), ``QueueCombiner/mayCombine(queuedAttempts:queuedChangeSet:newChangeSet:)`` allows it
    /// (never attempted, the same change set or none), both were written with the same ``WriteOptions`` and no action
    /// call was queued since (``QueuedActionTable/barrier(_:)``); otherwise it is appended after it, waiting for it
    /// (`waits_for`).
    /// - Parameters:
    ///   - base: the server version the record's local changes were made on (the shadow's base version).
    ///   - localData: the record's data once the change is applied locally (for combining two patches).
    ///   - changeSet: the change set the change belongs to, if any.
    ///   - options: the write's upload group, custom tag and headers.
    ///   - references: the records the change names in `reference` fields. A change is not folded into a queued one
    ///     that would then be uploaded before one of them: the server checks that a reference's record exists.
    @discardableResult
    func enqueue(
        _ db: Database, collection: String, id: String, _ change: QueueCombiner.Change, base: Int64?,
        localData: [String: JSONValue] = [:], combining: QueueCombining, changeSet: String? = nil, options: WriteOptions = .none,
        references: [(collection: String, id: String)] = [], at date: Date
    ) throws -> QueueCombiner.Outcome {
        let newest = try newest(db, collection: collection, id: id)
        var mayFold = combining.allows(change.kind)
        if mayFold, let newest, try queuedAfter(db, newest.sequence, references) { mayFold = false }
        // A change queued by an older app build keeps that build's shape: nothing is folded into it. Nor is a change
        // queued before an action call: the call's backend must see the record as it was when the call was made.
        let barrier = mayFold && newest != nil ? try QueuedActionTable().barrier(db) : 0
        let combinable = mayFold ? newest.flatMap {
            $0.schemaVersion == nil && $0.sequence > barrier && $0.options == options
                && QueueCombiner.mayCombine(queuedAttempts: $0.attempts, queuedChangeSet: $0.changeSet, newChangeSet: changeSet) ? $0 : nil
        } : nil
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
                INSERT INTO cairn_queue (op_id, collection, record_id, op, base_version, data, created_at, waits_for, change_set,
                                         upload_group, custom_tag, headers)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [
                OperationID.make(), collection, id, appended.kind.rawValue, Self.baseVersion(of: appended.kind, waitsFor: waitsFor, known: base),
                jsonText(appended.data), date.timeIntervalSince1970, waitsFor, changeSet, options.uploadGroup, options.customTag,
                options.headersText,
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

    /// Puts a record's one queued change at `position`, a place its replaced changes held and that is free now: a
    /// conflict's resolution keeps the place of the change it replaces, so an action call queued after that change
    /// still waits for it.
    func keepPlace(_ db: Database, collection: String, id: String, at position: Int64) throws {
        try db.execute(
            sql: """
                UPDATE cairn_queue SET seq = ? WHERE collection = ? AND record_id = ?
                  AND (SELECT count(*) FROM cairn_queue WHERE collection = ? AND record_id = ?) = 1
                  AND NOT EXISTS (SELECT 1 FROM cairn_queue WHERE seq = ?)
                """,
            arguments: [position, collection, id, collection, id, position])
    }

    /// Removes every queued change of a record.
    func removeAll(_ db: Database, collection: String, id: String) throws {
        try db.execute(sql: "DELETE FROM cairn_queue WHERE collection = ? AND record_id = ?", arguments: [collection, id])
    }

    // MARK: Uploading

    /// The next batch ready to upload, after position `after`, and counts an attempt for each of its changes, so they
    /// are never changed again. A change is ready when it waits for nothing and is the oldest of its record.
    ///
    /// A batch is either changes on their own, oldest first, at most `limit` of them and at most `bytes` of encoded
    /// operations (a single larger change goes alone), or one change set, whole, whatever its size (the set was
    /// checked against the server's limits when it was written): a set is never split nor mixed with other changes,
    /// and waits until all its changes are ready. A change queued after an action call waits until the call has its
    /// outcome (``QueuedActionTable/uploadBoundSQL``).
    ///
    /// Changes of a held upload group are never taken (``HeldGroupTable``); with `groups`, only changes of those
    /// groups are. The changes of a batch share their headers: a change with other headers ends the batch.
    func takeReady(_ db: Database, limit: Int, bytes: Int = .max, after: Int64, groups: Set<String>? = nil) throws -> [PendingOperation] {
        var operations: [PendingOperation] = []
        do {
            let onlyGroups = groups.map { JSONValue.array($0.sorted().map(JSONValue.string)).jsonText() }
            // Read in place (a cursor, no copied rows); it ends before the attempts are written.
            let rows = try Row.fetchCursor(db.cachedStatement(sql: Self.selectSQL + """
                 WHERE q.seq > ? AND q.waits_for IS NULL AND q.seq <= \(QueuedActionTable.uploadBoundSQL)
                  AND q.seq = (SELECT min(seq) FROM cairn_queue WHERE collection = q.collection AND record_id = q.record_id)
                  AND \(HeldGroupTable.notHeldSQL)
                  AND (? IS NULL OR q.upload_group IN (SELECT value FROM json_each(?)))
                ORDER BY q.seq LIMIT ?
                """), arguments: [after, onlyGroups, onlyGroups, limit])
            var size = 0
            var waitingSets: Set<String> = []
            while let row = try rows.next() {
                let operation = PendingOperation(row: row)
                if let changeSet = operation.changeSet {
                    guard !waitingSets.contains(changeSet) else { continue }
                    guard let members = try readySet(db, changeSet) else {
                        waitingSets.insert(changeSet)
                        continue
                    }
                    if operations.isEmpty { operations = members }
                    break
                }
                let operationSize = operation.wireSize
                if let first = operations.first, size + operationSize > bytes || first.headers != operation.headers { break }
                operations.append(operation)
                size += operationSize
            }
        }
        try db.cachedStatement(sql: """
            INSERT INTO cairn_attempts (seq, count) SELECT value, 1 FROM json_each(?) WHERE true
            ON CONFLICT (seq) DO UPDATE SET count = count + 1
            """).execute(arguments: [JSONValue.array(operations.map { .integer($0.sequence) }).jsonText()])
        for index in operations.indices { operations[index].attempts += 1 }
        return operations
    }

    /// A change set's changes in order when every one of them is ready, else `nil`.
    private func readySet(_ db: Database, _ changeSet: String) throws -> [PendingOperation]? {
        let waiting = try Bool.fetchOne(db.cachedStatement(sql: """
            SELECT EXISTS (SELECT 1 FROM cairn_queue AS q WHERE q.change_set = ? AND (q.waits_for IS NOT NULL
                OR q.seq <> (SELECT min(seq) FROM cairn_queue WHERE collection = q.collection AND record_id = q.record_id)))
            """), arguments: [changeSet]) ?? false
        return waiting ? nil : try operations(db, changeSet: changeSet)
    }
}
