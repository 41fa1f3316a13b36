import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    public func applyBatch(project: String, batch: BatchRequest, schema: Schema, user: String, now: Date) async throws -> BatchOutcome {
        let updatedAt = RFC3339.string(from: now)
        let prepared = batch.operations.map(PreparedOperation.init)
        return try await pool.writeWithoutTransaction { db in
            var outcome = BatchOutcome(results: [], resultTexts: [], changedCollections: [:])
            let updatedDate = RFC3339.date(from: updatedAt)
            try db.inTransaction(.immediate) {
                var head = try Int64.fetchOne(db, sql: "SELECT head_version FROM projects WHERE name = ?", arguments: [project]) ?? 0
                let startHead = head
                var results: [OperationResult] = []
                var texts: [String] = []
                results.reserveCapacity(batch.operations.count)
                texts.reserveCapacity(batch.operations.count)
                var changed: [String: Int64] = [:]
                var lookups = try BatchLookups(db, project: project, batch: batch.operations)
                let saveOperation = try db.cachedStatement(
                    sql: "INSERT INTO operations (project, op_id, fingerprint, result, created_at) VALUES (?, ?, ?, ?, ?)")
                let saveRecord = try db.cachedStatement(
                    sql: """
                        INSERT INTO records (project, collection, id, version, updated_at, updated_by, changed_at, deleted, data, field_versions)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (project, collection, id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at,
                        updated_by = excluded.updated_by, changed_at = excluded.changed_at, deleted = excluded.deleted,
                        data = excluded.data, field_versions = excluded.field_versions
                        """)

                for (index, operation) in batch.operations.enumerated() {
                    if let stored = lookups.operation(operation.opId) {
                        if stored.fingerprint == prepared[index].fingerprint {
                            let (result, text) = try Self.replay(stored: stored.result, of: operation, dataText: prepared[index].dataText)
                            results.append(result)
                            texts.append(text)
                        } else {
                            let mismatch = OperationResult.rejected(operation.opId, ErrorBody(
                                code: .idempotencyMismatch,
                                message: "opId \(operation.opId) was already used for a different operation; use a new opId"))
                            results.append(mismatch)
                            texts.append(mismatch.jsonValue.jsonText())
                        }
                        continue
                    }
                    let current = lookups.record(operation.collection, operation.id)
                    let result: OperationResult
                    var text: String?
                    var storedText: String?
                    switch BatchPlanner.plan(operation, current: current, collection: schema.collection(named: operation.collection)) {
                    case .write(let data, let deleted):
                        head += 1
                        let fieldVersions = BatchPlanner.fieldVersions(previous: current, newData: data, deleted: deleted, version: head)
                        let record = Record(
                            id: operation.id, version: head, updatedAt: updatedDate, updatedBy: user, deleted: deleted, data: deleted ? [:] : data)
                        // A create or update without top-level nulls commits the data as sent, whose text is made already.
                        let asSent = Self.commitsDataAsSent(operation, data: data)
                        let dataText = asSent ? prepared[index].dataText! : JSONValue.object(record.data).jsonText()
                        try saveRecord.execute(arguments: [
                            project, operation.collection, operation.id, head, updatedAt, user, now.epochSeconds, deleted,
                            dataText, BatchPlanner.fieldVersionsText(fieldVersions),
                        ])
                        changed[operation.collection] = head
                        lookups.wrote(StoredRecordState(record: record, fieldVersions: fieldVersions), collection: operation.collection)
                        result = .applied(operation.opId, record)
                        text = Self.appliedText(opId: operation.opId, record: record, dataText: dataText, updatedAt: updatedAt)
                        // Remembered without the data when a replay can take it from the operation itself.
                        storedText = asSent ? Self.appliedText(opId: operation.opId, record: record, dataText: nil, updatedAt: updatedAt) : text
                    case .unchanged(let record):
                        result = .applied(operation.opId, record)
                    case .conflict(let record):
                        result = .conflict(operation.opId, current: record)
                    case .reject(let error):
                        result = .rejected(operation.opId, error)
                    }
                    let resultText = text ?? result.jsonValue.jsonText()
                    try saveOperation.execute(arguments: [project, operation.opId, prepared[index].fingerprint, storedText ?? resultText, now.epochSeconds])
                    lookups.remembered(operation.opId, fingerprint: prepared[index].fingerprint, result: storedText ?? resultText)
                    results.append(result)
                    texts.append(resultText)
                }

                if batch.atomic, let failed = results.firstIndex(where: { $0.status != .applied }) {
                    outcome.results = results.map { result in
                        result.status == .applied
                            ? .rejected(result.opId, ErrorBody(
                                code: .batchAborted,
                                message: "not applied: the atomic batch was rolled back because operation \(failed) (\(results[failed].opId)) failed"))
                            : result
                    }
                    outcome.resultTexts = outcome.results.map { $0.jsonValue.jsonText() }
                    return .rollback
                }
                if head != startHead {
                    try db.execute(sql: "UPDATE projects SET head_version = ? WHERE name = ?", arguments: [head, project])
                }
                outcome.results = results
                outcome.resultTexts = texts
                outcome.changedCollections = changed
                return .commit
            }
            return outcome
        }
    }

    /// Whether a write commits exactly the data its operation sent, whose canonical text is then already made.
    static func commitsDataAsSent(_ operation: SyncOperation, data: [String: JSONValue]) -> Bool {
        (operation.op == .create || operation.op == .update) && data.count == operation.data?.count
    }

    /// The result and answer text of an operation applied before, from what was remembered of it.
    /// - Parameter dataText: the operation's canonical data text (``SyncOperation/canonicalDataText``).
    static func replay(stored text: String, of operation: SyncOperation, dataText: String?) throws -> (OperationResult, String) {
        var result = try CairnJSON.decode(OperationResult.self, from: Array(text.utf8))
        // Remembered without its data exactly when the write committed the data as sent, which is the operation's
        // own (the fingerprint matched); otherwise the stored text is the whole answer.
        guard result.status == .applied, var record = result.record, !record.deleted, let sent = operation.data, let dataText,
              commitsDataAsSent(operation, data: BatchPlanner.stripNulls(sent)), let updatedAt = record.updatedAt
        else { return (result, text) }
        record.data = sent
        result.record = record
        return (result, appliedText(opId: operation.opId, record: record, dataText: dataText, updatedAt: RFC3339.string(from: updatedAt)))
    }

    /// The JSON of an `applied` result, assembled around the data text already made for storage (the same bytes
    /// as `OperationResult.jsonValue.jsonText()` would give); without `dataText`, the record has no `data` member.
    static func appliedText(opId: String, record: CairnProtocol.Record, dataText: String?, updatedAt: String) -> String {
        var bytes = Array(#"{"opId":"#.utf8)
        bytes.reserveCapacity((dataText?.utf8.count ?? 0) + 160)
        JSONValue.writeString(opId, into: &bytes)
        bytes.append(contentsOf: #","record":{"#.utf8)
        if !record.deleted, let dataText {
            bytes.append(contentsOf: #""data":"#.utf8)
            bytes.append(contentsOf: dataText.utf8)
            bytes.append(UInt8(ascii: ","))
        }
        bytes.append(contentsOf: (record.deleted ? #""deleted":true,"id":"# : #""deleted":false,"id":"#).utf8)
        JSONValue.writeString(record.id, into: &bytes)
        bytes.append(contentsOf: #","updatedAt":"#.utf8)
        JSONValue.writeString(updatedAt, into: &bytes)
        bytes.append(contentsOf: #","updatedBy":"#.utf8)
        JSONValue.writeString(record.updatedBy ?? "", into: &bytes)
        bytes.append(contentsOf: #","version":\#(record.version)},"status":"applied"}"#.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// An operation's canonical data text and fingerprint, made before the write transaction.
struct PreparedOperation {
    let dataText: String?
    let fingerprint: String

    init(_ operation: SyncOperation) {
        dataText = operation.canonicalDataText
        fingerprint = SchemaVersioning.digest(operation.fingerprintText(dataText: dataText))
    }
}
