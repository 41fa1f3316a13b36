import Foundation

/// The primitives of one project's write transaction (see ``ServerStorage/withProjectWriteTransaction(project:_:)``).
/// Reads see the transaction's own writes. A backend may defer writes until the next read or the commit, so a
/// write's error can surface there.
///
/// ```swift
/// try await storage.withProjectWriteTransaction(project: "field") { transaction in
///     let version = try await transaction.headVersion() + 1   // or read(_:) for several things in one access
///     try await transaction.writeRecord(row, collection: "notes", changedAt: now)   // row.version == version
///     try await transaction.setHeadVersion(version)
///     return .commit(version)
/// }
/// ```
public protocol ProjectWriteTransaction: Sendable {
    /// The project the transaction writes.
    var project: String { get }
    /// Reads, in one access, what a change needs before it writes: the head version, the remembered operations
    /// among `reads.opIds` and the current rows of `reads.records`. One read, not three, because each access to
    /// the database is a round trip while the project's write lock is held.
    func read(_ reads: TransactionReads) async throws -> TransactionSnapshot
    /// Stores a new head version.
    func setHeadVersion(_ version: Int64) async throws
    /// Remembers an operation's result (an opId already remembered is an error).
    func rememberOperation(_ operation: RememberedOperation, at time: Date) async throws
    /// Inserts or replaces a record's row; `changedAt` is the instant the tombstone horizon is measured from.
    func writeRecord(_ row: RecordRow, collection: String, changedAt: Date) async throws
    /// Reads, in one access, only the versions of `reads.records` and which of `reads.opIds` are remembered: what a
    /// change planned before the lock re-checks under it (see ``TransactionVersions/agree(with:reads:)``). A backend
    /// without a lighter query derives it from ``read(_:)``.
    func versions(_ reads: TransactionReads) async throws -> TransactionVersions
    /// The ids of the live records of `collection` whose data's top-level `field` holds the string `id`, in id order:
    /// the records a `reference` field makes depend on a record being deleted (``FieldSchema/onDelete``).
    func liveReferrers(collection: String, field: String, id: String) async throws -> [String]
}

extension ProjectWriteTransaction {
    /// The versions ``read(_:)`` finds.
    public func versions(_ reads: TransactionReads) async throws -> TransactionVersions {
        TransactionVersions(try await read(reads))
    }

    /// The project's head version: the highest version handed out (0 for a new project).
    public func headVersion() async throws -> Int64 { try await read(TransactionReads()).headVersion }

    /// The remembered operations among `opIds`, matched by their exact UTF-8 bytes, in no particular order.
    public func rememberedOperations(_ opIds: [String]) async throws -> [RememberedOperation] {
        try await read(TransactionReads(opIds: opIds)).operations
    }

    /// The current rows (tombstones included) of the records of `collection` among `ids`, in no particular order.
    public func currentRecords(collection: String, ids: [String]) async throws -> [RecordRow] {
        try await read(TransactionReads(records: [collection: ids])).records[collection] ?? []
    }
}

/// What ``ProjectWriteTransaction/read(_:)`` looks up.
public struct TransactionReads: Sendable, Hashable {
    /// The opIds whose remembered operations to read, compared as exact UTF-8 bytes.
    public var opIds: [String]
    /// The ids of the records to read, per collection.
    public var records: [String: [String]]

    /// Reads of these operations and records (the head version is always read).
    public init(opIds: [String] = [], records: [String: [String]] = [:]) {
        self.opIds = opIds
        self.records = records
    }
}

/// What ``ProjectWriteTransaction/read(_:)`` found, as of the transaction's own writes.
public struct TransactionSnapshot: Sendable, Hashable {
    /// The project's head version: the highest version handed out (0 for a new project).
    public var headVersion: Int64
    /// The remembered operations among those asked for, in no particular order.
    public var operations: [RememberedOperation]
    /// The current rows (tombstones included) among those asked for, per collection, in no particular order;
    /// a collection asked for is present even when none of its records exist.
    public var records: [String: [RecordRow]]

    /// A snapshot with these values.
    public init(headVersion: Int64, operations: [RememberedOperation], records: [String: [RecordRow]]) {
        self.headVersion = headVersion
        self.operations = operations
        self.records = records
    }
}

/// The versions of a change's records and the opIds remembered among its own, as of one access: what a change
/// planned against a ``TransactionSnapshot`` read outside the project's write lock compares under it.
public struct TransactionVersions: Sendable, Hashable {
    /// The project's head version.
    public var headVersion: Int64
    /// The remembered opIds among those asked for, as their exact UTF-8 bytes.
    public var operations: Set<[UInt8]>
    /// The version of each stored record among those asked for (tombstones included), per collection; an id absent
    /// from its collection's map has no row.
    public var records: [String: [String: Int64]]

    /// Versions with these values.
    public init(headVersion: Int64, operations: Set<[UInt8]>, records: [String: [String: Int64]]) {
        self.headVersion = headVersion
        self.operations = operations
        self.records = records
    }

    /// The versions `snapshot` holds.
    public init(_ snapshot: TransactionSnapshot) {
        self.init(
            headVersion: snapshot.headVersion, operations: Set(snapshot.operations.map { Array($0.opId.utf8) }),
            records: snapshot.records.mapValues { rows in Dictionary(rows.map { ($0.id, $0.version) }, uniquingKeysWith: max) })
    }

    /// Whether every record and opId of `reads` stands as in `other`: the same version (or still no row), and the
    /// same opIds remembered. The head may differ: others wrote other records meanwhile.
    public func agree(with other: TransactionVersions, reads: TransactionReads) -> Bool {
        guard operations == other.operations else { return false }
        for (collection, ids) in reads.records {
            let mine = records[collection] ?? [:]
            let theirs = other.records[collection] ?? [:]
            for id in ids where mine[id] != theirs[id] { return false }
        }
        return true
    }
}

/// How a project write transaction ends, with the value it returns either way.
public enum TransactionEnd<Value: Sendable>: Sendable {
    /// Keep every write.
    case commit(Value)
    /// Discard every write.
    case rollback(Value)
}

/// A remembered operation: its opId, the fingerprint of what it asked, and the result text answered.
public struct RememberedOperation: Sendable, Hashable {
    /// The opId the client chose for the operation; unique within the project, compared as exact UTF-8 bytes.
    public var opId: String
    /// A digest of the operation, to tell a replay from a reuse of the opId for something else.
    public var fingerprint: String
    /// The stored result, as JSON text.
    public var result: String
    /// The tag the client gave the operation (``SyncOperation/tag``), kept for support.
    public var tag: String?

    /// A remembered operation with these values.
    public init(opId: String, fingerprint: String, result: String, tag: String? = nil) {
        self.opId = opId
        self.fingerprint = fingerprint
        self.result = result
        self.tag = tag
    }
}

/// A record's row as stored. Its data stays JSON text, so pages of the feed never pass through a JSON decoder.
public struct RecordRow: Sendable, Hashable {
    /// The record's id, unique within its collection.
    public var id: String
    /// The project-wide version at which this state was committed.
    public var version: Int64
    /// The commit time as RFC 3339 text, as answered to clients.
    public var updatedAt: String
    /// The user who committed it.
    public var updatedBy: String
    /// True for a tombstone: kept so delta pulls learn of the delete, until the purge removes it.
    public var deleted: Bool
    /// The record's data: a JSON object's text (`{}` for tombstones).
    public var dataText: String
    /// The version at which each field last changed (for the `merge-fields` policy).
    public var fieldVersions: [String: Int64]
    /// The values of the fields the collection's data rules read, as a JSON object's text; `nil` without rules.
    public var ruleDataText: String?
    /// For a tombstone read back, the data the record had before it was deleted; `nil` otherwise (and when writing).
    public var priorDataText: String?

    /// A row with these values.
    public init(
        id: String, version: Int64, updatedAt: String, updatedBy: String, deleted: Bool, dataText: String, fieldVersions: [String: Int64],
        ruleDataText: String? = nil, priorDataText: String? = nil
    ) {
        self.ruleDataText = ruleDataText
        self.priorDataText = priorDataText
        self.id = id
        self.version = version
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        self.deleted = deleted
        self.dataText = dataText
        self.fieldVersions = fieldVersions
    }
}
