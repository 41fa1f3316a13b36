import Foundation

/// What an ``SyncOperation`` does to its record.
public enum OperationKind: String, Codable, Sendable, CaseIterable {
    /// Creates the record; a `conflict` if the id already holds a live record.
    case create
    /// Replaces the record's data as a whole.
    case update
    /// Applies a JSON Merge Patch (RFC 7396) to the record's data.
    case patch
    /// Deletes the record, leaving a tombstone.
    case delete
}

/// One write in a batch.
///
/// ```swift
/// let op = SyncOperation(opId: OperationID.make(), collection: "notes", id: "n-2", op: .patch,
///                    baseVersion: 1040, data: ["done": true])
/// ```
public struct SyncOperation: Codable, Sendable, Hashable {
    /// The idempotency key: the same `opId` is applied at most once.
    public var opId: String
    /// The collection the record belongs to.
    public var collection: String
    /// The record's id: 1 to 128 characters from `[A-Za-z0-9_.:-]`, which clients may make themselves (UUIDs).
    public var id: String
    /// What to do: `create`, `update`, `patch` or `delete`.
    public var op: OperationKind
    /// The record version the change was made on; `nil` applies unconditionally.
    public var baseVersion: Int64?
    /// The record data (`create`, `update`) or merge patch (`patch`); `nil` for `delete`.
    public var data: [String: JSONValue]?
    /// The schema number the app build that made the change was made for, when it differs from the batch's
    /// `Cairn-Schema-Version` (a change queued before the app updated); the server translates its data from that
    /// schema's shape. `nil`: the request's version.
    public var schemaVersion: Int64?
    /// A tag the client gives the operation (up to 200 characters, no control characters), kept by the server in the
    /// operation's history for support; not part of what makes two sends of an opId the same operation.
    public var tag: String?

    /// The rule of ``tag``, for the SDK that sets it and the server that checks it: at most 200 characters, none of
    /// them a control character (U+0000 among them).
    public static func isValidTag(_ tag: String) -> Bool {
        tag.count <= 200 && !tag.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// Creates one write; make `opId` with ``OperationID/make(now:)`` and keep it when resending, so a retry applies once.
    public init(
        opId: String, collection: String, id: String, op: OperationKind, baseVersion: Int64? = nil,
        data: [String: JSONValue]? = nil, schemaVersion: Int64? = nil, tag: String? = nil
    ) {
        self.schemaVersion = schemaVersion
        self.tag = tag
        self.opId = opId
        self.collection = collection
        self.id = id
        self.op = op
        self.baseVersion = baseVersion
        self.data = data
    }

    /// The members of an operation object: the one list every reader and writer of the shape goes by. Writers switch
    /// over every case, so a new member is a compile error until each codec handles it.
    package enum CodingKeys: String, CodingKey, CaseIterable, Sendable { case opId, collection, id, op, baseVersion, data, schemaVersion, tag }
}

/// The body of `POST /v1/projects/{project}/batch`.
public struct BatchRequest: Codable, Sendable {
    /// When true, all operations apply in one transaction or none do.
    public var atomic: Bool
    /// The operations, applied in order.
    public var operations: [SyncOperation]

    /// Creates a batch; by default a server accepts at most 1000 operations and 10 MB per batch (`413 payload_too_large`).
    ///
    /// ```swift
    /// let batch = BatchRequest(atomic: true, operations: [
    ///     SyncOperation(opId: OperationID.make(), collection: "notes", id: "n-1", op: .create, data: ["title": "Hi"]),
    ///     SyncOperation(opId: OperationID.make(), collection: "notes", id: "n-0", op: .delete, baseVersion: 998)])
    /// ```
    public init(atomic: Bool = false, operations: [SyncOperation]) {
        self.atomic = atomic
        self.operations = operations
    }

    /// The most operations a server takes in one batch unless configured otherwise.
    public static let defaultMaximumOperations = 1000
    /// The largest batch body, in bytes, a server takes unless configured otherwise (10 MiB).
    public static let defaultMaximumBytes = 10 * 1024 * 1024

    /// The members of a batch object, in the order its writer puts them.
    package enum CodingKeys: String, CodingKey, CaseIterable, Sendable { case atomic, operations }

    /// Decodes the batch body; an absent `atomic` reads as `false`, an absent `operations` is a `DecodingError`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        atomic = try container.decodeIfPresent(Bool.self, forKey: .atomic) ?? false
        operations = try container.decode([SyncOperation].self, forKey: .operations)
    }
}
