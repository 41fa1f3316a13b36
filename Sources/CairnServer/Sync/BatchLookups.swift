import CairnProtocol

/// What a batch reads before it writes: the remembered operations with its opIds and the current states of its
/// records (one read each per collection), then kept current as the batch goes on (an operation may touch a record
/// an earlier one in the same batch wrote, or repeat its opId).
struct BatchLookups {
    /// Keyed by the opId's exact bytes, as storage compares them: Swift's `String` equality would also match
    /// differently encoded but equivalent (non-ASCII, so invalid) opIds.
    private var operations: [[UInt8]: RememberedOperation] = [:]
    private var records: [String: [String: StoredRecordState]] = [:]

    /// Reads what `batch` needs inside `transaction`.
    init(_ transaction: any ProjectWriteTransaction, batch: [SyncOperation]) async throws {
        for operation in try await transaction.rememberedOperations(batch.map(\.opId).filter(Names.isValidID)) {
            operations[Array(operation.opId.utf8)] = operation
        }
        for (collection, operations) in Dictionary(grouping: batch, by: \.collection) {
            var states: [String: StoredRecordState] = [:]
            for row in try await transaction.currentRecords(collection: collection, ids: operations.map(\.id)) {
                states[row.id] = try StoredRecordState(row)
            }
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
