import CairnProtocol
import Foundation

/// Hands out versions inside one project write transaction: each write takes the next project-wide version,
/// moves the field versions of the fields it changes, and stores the new head version at ``finish()``. The one
/// place versions are numbered, for batches and for any other change (a completed file setting a record field).
///
/// ```swift
/// try await storage.withProjectWriteTransaction(project: "field") { transaction in
///     let snapshot = try await transaction.read(TransactionReads(records: ["notes": ["n1"]]))
///     var writer = RecordWriter(transaction, head: snapshot.headVersion, user: "alice", now: now)
///     let written = try await writer.write(collection: "notes", id: "n1", data: ["title": "a"], previous: nil)
///     try await writer.finish()
///     return .commit(written.state.record)
/// }
/// ```
struct RecordWriter {
    let transaction: any ProjectWriteTransaction
    /// Who writes.
    let user: String
    /// When, as a date and as the RFC 3339 text answered to clients.
    let now: Date
    let updatedAt: String
    /// `updatedAt` read back, as records carry it (the text is what clients see).
    private let updatedDate: Date?
    /// The head version: the last version handed out.
    private(set) var head: Int64
    private let startHead: Int64
    /// The highest new version per changed collection (for live notices).
    private(set) var changedCollections: [String: Int64] = [:]
    /// Makes the rows of writes not prepared before the lock.
    private var preparer: RowPreparer

    /// A writer that numbers from `head`, the project's head version as the transaction read it.
    init(_ transaction: any ProjectWriteTransaction, head: Int64, user: String, now: Date, schema: Schema? = nil) {
        self.preparer = RowPreparer(schema: schema)
        self.transaction = transaction
        self.user = user
        self.updatedAt = RFC3339.string(from: now)
        self.updatedDate = RFC3339.date(from: updatedAt)
        self.now = now
        self.head = head
        self.startHead = head
    }

    /// Commits `data` (or a tombstone when `deleted`) for a record at the next version; returns its new state and
    /// the row stored.
    /// - Parameters:
    ///   - dataText: `data`'s canonical JSON text when the caller made it already.
    ///   - previous: the record's current state, whose field versions carry over.
    ///   - fieldVersions: the field versions to store instead of those the change moves (a migration keeps them).
    mutating func write(
        collection: String, id: String, data: [String: JSONValue], dataText: String? = nil, deleted: Bool = false,
        previous: StoredRecordState?, fieldVersions kept: [String: Int64]? = nil
    ) async throws -> (state: StoredRecordState, row: RecordRow) {
        let prepared = preparer.prepare(collection: collection, id: id, data: data, dataText: dataText, deleted: deleted, previous: previous)
        return try await write(prepared, fieldVersions: kept)
    }

    /// Commits a row prepared before the lock at the next version: the one step of a write that must be serial.
    mutating func write(_ prepared: PreparedRow, fieldVersions kept: [String: Int64]? = nil) async throws -> (state: StoredRecordState, row: RecordRow) {
        head += 1
        let fieldVersions = kept ?? BatchPlanner.fieldVersions(previous: prepared.previous, moving: prepared.movedFields, to: head)
        let row = RecordRow(
            id: prepared.id, version: head, updatedAt: updatedAt, updatedBy: user, deleted: prepared.deleted, dataText: prepared.dataText,
            fieldVersions: fieldVersions, ruleDataText: prepared.ruleDataText)
        try await transaction.writeRecord(row, collection: prepared.collection, changedAt: now)
        changedCollections[prepared.collection] = head
        let record = Record(
            id: prepared.id, version: head, updatedAt: updatedDate, updatedBy: user, deleted: prepared.deleted, data: prepared.data)
        return (StoredRecordState(record: record, fieldVersions: fieldVersions), row)
    }

    /// Stores the new head version, when anything was written.
    func finish() async throws {
        if head != startHead { try await transaction.setHeadVersion(head) }
    }
}
