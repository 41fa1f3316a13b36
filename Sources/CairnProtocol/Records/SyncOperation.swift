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

    /// Creates one write; make `opId` with ``OperationID/make(now:)`` and keep it when resending, so a retry applies once.
    public init(
        opId: String, collection: String, id: String, op: OperationKind, baseVersion: Int64? = nil,
        data: [String: JSONValue]? = nil
    ) {
        self.opId = opId
        self.collection = collection
        self.id = id
        self.op = op
        self.baseVersion = baseVersion
        self.data = data
    }

    /// Canonical JSON of everything but `opId`: two sends of the same operation give the same text.
    public var fingerprintText: String { fingerprintText(dataText: canonicalDataText) }

    /// `data` as canonical JSON text (sorted keys, no spaces), or `nil` without data.
    public var canonicalDataText: String? { data.map { JSONValue.object($0).jsonText() } }

    /// ``fingerprintText`` around data text already made by ``canonicalDataText``, so a server that also stores
    /// that text serialises the data once.
    public func fingerprintText(dataText: String?) -> String {
        // The members in sorted order, as `JSONValue.jsonText()` writes an object.
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity((dataText?.utf8.count ?? 0) + collection.utf8.count + id.utf8.count + 64)
        if let baseVersion { bytes.append(contentsOf: #""baseVersion":\#(baseVersion),"#.utf8) }
        bytes.append(contentsOf: #""collection":"#.utf8)
        JSONValue.writeString(collection, into: &bytes)
        if let dataText {
            bytes.append(contentsOf: #","data":"#.utf8)
            bytes.append(contentsOf: dataText.utf8)
        }
        bytes.append(contentsOf: #","id":"#.utf8)
        JSONValue.writeString(id, into: &bytes)
        bytes.append(contentsOf: #","op":"#.utf8)
        JSONValue.writeString(op.rawValue, into: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
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

    enum CodingKeys: String, CodingKey { case atomic, operations }

    /// Decodes the batch body; an absent `atomic` reads as `false`, an absent `operations` is a `DecodingError`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        atomic = try container.decodeIfPresent(Bool.self, forKey: .atomic) ?? false
        operations = try container.decode([SyncOperation].self, forKey: .operations)
    }
}
