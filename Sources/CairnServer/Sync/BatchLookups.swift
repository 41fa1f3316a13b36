import CairnProtocol

/// What a batch reads before it writes: the remembered operations with its opIds and the current states of its
/// records (in the transaction's one read), then kept current as the batch goes on (an operation may touch a record
/// an earlier one in the same batch wrote, or repeat its opId).
struct BatchLookups {
    /// Keyed by the opId's exact bytes, as storage compares them: Swift's `String` equality would also match
    /// differently encoded but equivalent (non-ASCII, so invalid) opIds.
    private var operations: [[UInt8]: RememberedOperation] = [:]
    private var records: [String: [String: StoredRecordState]] = [:]

    /// What `batch` reads: its valid opIds and, per collection, the ids of its records.
    static func reads(_ batch: [SyncOperation]) -> TransactionReads {
        TransactionReads(
            opIds: batch.map(\.opId).filter(Names.isValidID),
            records: Dictionary(grouping: batch, by: \.collection).mapValues { $0.map(\.id) })
    }

    /// Whether `batch` names each record and each valid opId once: then no operation's decision depends on another's
    /// write, and the batch can decide every operation from a snapshot read before the project's write lock.
    static func touchesEachOnce(_ batch: [SyncOperation]) -> Bool {
        var records = Set<RecordKey>()
        var opIds = Set<[UInt8]>()
        for operation in batch {
            guard records.insert(RecordKey(collection: operation.collection, id: operation.id)).inserted else { return false }
            if Names.isValidID(operation.opId), !opIds.insert(Array(operation.opId.utf8)).inserted { return false }
        }
        return true
    }

    /// Lookups of nothing stored.
    init() {}

    /// The lookups of what ``reads(_:)`` found.
    init(_ snapshot: TransactionSnapshot) throws {
        for operation in snapshot.operations { operations[Array(operation.opId.utf8)] = operation }
        for (collection, rows) in snapshot.records {
            var states: [String: StoredRecordState] = [:]
            for row in rows { states[row.id] = try StoredRecordState(row) }
            records[collection] = states
        }
    }

    /// What is remembered of `opId`, as of the operations handled so far.
    func operation(_ opId: String) -> RememberedOperation? { operations[Array(opId.utf8)] }

    /// The record's state as of the operations applied so far.
    func record(_ collection: String, _ id: String) -> StoredRecordState? { records[collection]?[id] }

    mutating func wrote(_ state: StoredRecordState, collection: String) { records[collection, default: [:]][state.record.id] = state }

    mutating func remembered(_ operation: RememberedOperation) { operations[Array(operation.opId.utf8)] = operation }
}
