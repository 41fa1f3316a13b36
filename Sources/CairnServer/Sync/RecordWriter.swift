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
    /// The project's schema, whose data rules say what each row keeps in `rule_data` (``RuleFields``).
    private let schema: Schema?
    private var ruleFieldNames: [String: [String]] = [:]

    /// A writer that numbers from `head`, the project's head version as the transaction read it.
    init(_ transaction: any ProjectWriteTransaction, head: Int64, user: String, now: Date, schema: Schema? = nil) {
        self.schema = schema
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
        head += 1
        let stored = deleted ? [:] : data
        let fieldVersions = kept ?? BatchPlanner.fieldVersions(previous: previous, newData: data, deleted: deleted, version: head)
        let names = ruleFieldNames[collection] ?? schema?.collection(named: collection).map(RuleFields.names) ?? []
        ruleFieldNames[collection] = names
        let row = RecordRow(
            id: id, version: head, updatedAt: updatedAt, updatedBy: user, deleted: deleted,
            dataText: deleted ? "{}" : (dataText ?? JSONValue.object(stored).jsonText()), fieldVersions: fieldVersions,
            ruleDataText: deleted ? nil : RuleFields.text(of: stored, names: names))
        try await transaction.writeRecord(row, collection: collection, changedAt: now)
        changedCollections[collection] = head
        let record = Record(
            id: id, version: head, updatedAt: updatedDate, updatedBy: user, deleted: deleted, data: stored)
        return (StoredRecordState(record: record, fieldVersions: fieldVersions), row)
    }

    /// Stores the new head version, when anything was written.
    func finish() async throws {
        if head != startHead { try await transaction.setHeadVersion(head) }
    }
}
