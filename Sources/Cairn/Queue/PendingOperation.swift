import CairnProtocol
import Foundation

/// A local change waiting to be uploaded, as kept in the store's durable queue.
public struct PendingOperation: Sendable, Hashable, Identifiable {
    /// The queue position: lower goes first.
    public var sequence: Int64
    /// The idempotency key sent with every attempt.
    public var opId: String
    /// The collection.
    public var collection: String
    /// The record's id.
    public var recordID: String
    /// What it does.
    public var kind: OperationKind
    /// The server version the change was made on; `nil` for a create, or while it waits for ``waitsFor``.
    public var baseVersion: Int64?
    /// The data (create, update) or merge patch (patch).
    public var data: [String: JSONValue]? { decodeObject(dataText) }
    /// The same, as the JSON text the queue stores and uploads.
    var dataText: String?
    /// How many uploads were attempted. An attempted operation is never changed again, so retries stay identical.
    public var attempts: Int
    /// When the change was first made.
    public var createdAt: Date
    /// The `opId` of an earlier upload of the same record this one was made on top of; its base version is known
    /// once that upload is acknowledged.
    public var waitsFor: String?
    /// The change set the operation belongs to (``CairnClient/writeChangeSet(options:_:)``), uploaded with the set's other
    /// operations as one atomic batch; `nil` for a change on its own.
    public var changeSet: String? = nil
    /// The schema number of the older app build that queued it, when a newer build opened the store since; `nil`:
    /// made by the current build. Uploaded with the change, so the server translates it from that shape.
    public var schemaVersion: Int64? = nil
    /// The upload group it was written in (``WriteOptions/uploadGroup``); `nil`: none.
    public var uploadGroup: String? = nil
    /// The tag the server keeps with it (``WriteOptions/customTag``).
    public var customTag: String? = nil
    /// The headers sent with the batch that uploads it (``WriteOptions/headers``).
    public var headers: [String: String] = [:]

    /// The options it was written with.
    public var options: WriteOptions { WriteOptions(uploadGroup: uploadGroup, customTag: customTag, headers: headers) }

    /// `Identifiable`: the operation's `opId`.
    public var id: String { opId }

    /// Appends the operation as the batch endpoint takes it, splicing the stored data text in unparsed.
    func writeWireJSON(into bytes: inout [UInt8]) {
        SyncOperation.write(
            opId: opId, collection: collection, id: recordID, op: kind, baseVersion: baseVersion, dataText: dataText,
            schemaVersion: schemaVersion, tag: customTag, order: SyncOperation.wireOrder, into: &bytes)
    }

    /// The bytes the operation takes in a batch body (its JSON and the comma before it).
    var wireSize: Int {
        var bytes: [UInt8] = []
        bytes.reserveCapacity((dataText?.utf8.count ?? 0) + 200)
        writeWireJSON(into: &bytes)
        return bytes.count + 1
    }

    /// The body of `POST .../batch` uploading `operations`, in order: atomic when they are a change set.
    static func batchBody(_ operations: [PendingOperation]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(operations.count * 700)
        BatchRequest.write(atomic: operations.first?.changeSet != nil, count: operations.count, into: &bytes) { index, bytes in
            operations[index].writeWireJSON(into: &bytes)
        }
        return bytes
    }
}

/// An operation the server rejected, kept with its payload and the reason until the app retries or discards it.
public struct FailedOperation: Sendable, Hashable, Identifiable {
    /// The failed list's own key.
    public var id: Int64
    /// The operation id it was uploaded with.
    public var opId: String
    /// The collection of the record.
    public var collection: String
    /// The record's id.
    public var recordID: String
    /// What the upload did: create, update, patch or delete.
    public var kind: OperationKind
    /// The server version the change was made on; `nil` for a create or an unconditional write.
    public var baseVersion: Int64?
    /// The data or merge patch sent; `nil` for a delete.
    public var data: [String: JSONValue]?
    /// Why the server refused it.
    public var error: ErrorBody
    /// When the refusal was recorded (the configured wall clock).
    public var failedAt: Date
    /// The change set the operation belonged to; `nil` for a change on its own. A set fails as one entry: this one
    /// describes the operation that made it fail, and ``CairnClient/retryFailed(_:data:)`` and
    /// ``CairnClient/discardFailed(_:)`` act on the whole set.
    public var changeSet: String? = nil
    /// For a change set, all its operations in their order, each with its own error (`batch_aborted` for those the
    /// server would have applied); empty for a change on its own.
    public var changeSetOperations: [FailedOperation] = []
    /// The options it was written with; a retry queues it with them.
    public var options: WriteOptions = .none
}
