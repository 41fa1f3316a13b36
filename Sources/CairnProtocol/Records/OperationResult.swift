import Foundation

/// The outcome of one operation of a batch.
public enum OperationStatus: String, Codable, Sendable {
    /// The operation was committed; `record` is the new state.
    case applied
    /// The record changed since `baseVersion` and the policy refused; `current` is the server's state.
    case conflict
    /// The operation was refused; `error` says why.
    case rejected
}

/// The server's answer for one operation.
public struct OperationResult: Codable, Sendable, Hashable {
    /// The operation's idempotency key.
    public var opId: String
    /// Applied, conflict or rejected.
    public var status: OperationStatus
    /// The committed state, when `applied`.
    public var record: Record?
    /// The server's current state (a record or a tombstone), when `conflict`.
    public var current: Record?
    /// Why, when `rejected`.
    public var error: ErrorBody?

    /// Creates a result; prefer ``applied(_:_:)``, ``conflict(_:current:)`` and ``rejected(_:_:)``, which fill the right member.
    public init(opId: String, status: OperationStatus, record: Record? = nil, current: Record? = nil, error: ErrorBody? = nil) {
        self.opId = opId
        self.status = status
        self.record = record
        self.current = current
        self.error = error
    }

    /// The members of a result object: the one list every reader and writer of the shape goes by. Writers put them in
    /// this order (sorted, as canonical JSON) and switch over every case, so a new member is a compile error until
    /// each codec handles it.
    package enum CodingKeys: String, CodingKey, CaseIterable, Sendable { case current, error, opId, record, status }

    /// An `applied` result.
    public static func applied(_ opId: String, _ record: Record) -> OperationResult {
        OperationResult(opId: opId, status: .applied, record: record)
    }

    /// A `conflict` result.
    public static func conflict(_ opId: String, current: Record) -> OperationResult {
        OperationResult(opId: opId, status: .conflict, current: current)
    }

    /// A `rejected` result.
    public static func rejected(_ opId: String, _ error: ErrorBody) -> OperationResult {
        OperationResult(opId: opId, status: .rejected, error: error)
    }
}

/// The answer of `POST /v1/projects/{project}/batch`: one result per operation, in order.
public struct BatchResponse: Codable, Sendable {
    /// The results, in the order of the request's operations.
    public var results: [OperationResult]

    /// Creates a batch answer from one result per operation, in request order.
    public init(results: [OperationResult]) { self.results = results }
}
