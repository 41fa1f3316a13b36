import CairnProtocol
import Foundation
import GRDB

/// What a batch reads before it writes: the remembered operations with its opIds (one query) and the current
/// states of its records (one query per collection), then kept current as the batch writes (an operation may touch
/// a record an earlier one in the same batch wrote, or repeat its opId).
struct BatchLookups {
    /// A remembered operation: its fingerprint and its stored result text.
    struct Remembered {
        var fingerprint: String
        var result: String
    }

    /// Keyed by the opId's exact bytes, as the database compares them: Swift's `String` equality would also match
    /// differently encoded but equivalent (non-ASCII, so invalid) opIds.
    private var operations: [[UInt8]: Remembered] = [:]
    private var records: [String: [String: StoredRecordState]] = [:]

    init(_ db: Database, project: String, batch: [SyncOperation]) throws {
        let opIds = JSONValue.array(batch.map { .string($0.opId) }).jsonText()
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT op_id, fingerprint, result FROM operations WHERE project = ? AND op_id IN (SELECT value FROM json_each(?))
            """), arguments: [project, opIds])
        while let row = try rows.next() {
            let opId: String = row[0]
            operations[Array(opId.utf8)] = Remembered(fingerprint: row[1], result: row[2])
        }
        for (collection, operations) in Dictionary(grouping: batch, by: \.collection) {
            let ids = JSONValue.array(operations.map { .string($0.id) }).jsonText()
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT id, version, updated_at, updated_by, deleted, data, field_versions FROM records
                WHERE project = ? AND collection = ? AND id IN (SELECT value FROM json_each(?))
                """), arguments: [project, collection, ids])
            var states: [String: StoredRecordState] = [:]
            while let row = try rows.next() {
                let state = try Self.recordState(row)
                states[state.record.id] = state
            }
            records[collection] = states
        }
    }

    /// What is remembered of `opId`, as of the operations applied so far.
    func operation(_ opId: String) -> Remembered? { operations[Array(opId.utf8)] }

    /// The record's state as of the operations applied so far.
    func record(_ collection: String, _ id: String) -> StoredRecordState? { records[collection]?[id] }

    mutating func wrote(_ state: StoredRecordState, collection: String) { records[collection, default: [:]][state.record.id] = state }

    mutating func remembered(_ opId: String, fingerprint: String, result: String) {
        operations[Array(opId.utf8)] = Remembered(fingerprint: fingerprint, result: result)
    }

    /// A stored record row: id, version, updated_at, updated_by, deleted, data, field_versions.
    static func recordState(_ row: Row) throws -> StoredRecordState {
        let dataText: String = row[5]
        let versionsText: String = row[6]
        let data = try JSONValue(parsing: Array(dataText.utf8)).objectValue ?? [:]
        let versions = (try JSONValue(parsing: Array(versionsText.utf8)).objectValue ?? [:]).compactMapValues(\.integerValue)
        let updatedAt: String = row[2]
        let record = CairnProtocol.Record(
            id: row[0], version: row[1], updatedAt: RFC3339.date(from: updatedAt), updatedBy: row[3], deleted: row[4], data: data)
        return StoredRecordState(record: record, fieldVersions: versions)
    }
}
