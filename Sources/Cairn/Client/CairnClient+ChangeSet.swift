import CairnProtocol
import Foundation

extension CairnClient {
    /// Makes local writes that the server applies all or none: a change set (SAP's `processBatch` change set).
    ///
    /// The writes commit to the local store together, are queued as one unit and uploaded as one atomic batch (never
    /// split, never mixed with other changes). When the server refuses any of them, or finds one in conflict, it
    /// applies none, and the whole set goes to ``failedOperations()`` as one entry, which ``retryFailed(_:data:)``
    /// queues again and ``discardFailed(_:)`` drops as one. Changes of a record made outside the set are never folded
    /// into the set's operations: they are queued after them.
    ///
    /// ```swift
    /// try client.writeChangeSet { set in
    ///     try set.patch("accounts", id: "a-1", ["balance": 70])
    ///     try set.patch("accounts", id: "a-2", ["balance": 130])
    ///     try set.create("transfers", id: "t-9", data: ["from": "a-1", "to": "a-2", "amount": 30])
    /// }
    /// ```
    ///
    /// A set may hold at most 1000 operations and 10 MiB of them (what a server takes in one batch by default);
    /// a larger one is refused here with `payload_too_large` and nothing is written. It may not hold collections
    /// uploaded by a ``CollectionSyncTask`` (`invalid_argument`); writes of local-only collections commit with it but
    /// are never uploaded.
    ///
    /// - Parameter options: the upload group, custom tag and headers of the whole set (a set uploads as one batch).
    @discardableResult
    public func writeChangeSet<T>(options: WriteOptions = .none, _ body: (BatchWriter) throws -> T) throws -> T {
        try writeTogether(changeSet: OperationID.make(), options: options, body)
    }
}
