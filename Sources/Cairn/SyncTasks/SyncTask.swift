import CairnProtocol
import Foundation
import Synchronization

/// Uploads one collection's queued changes somewhere other than the Cairn server (another API, say), answering for
/// each operation exactly as the server would. Register it in ``CairnConfiguration/syncTasks``; the operations then
/// go through the same queue, retries, conflict resolution, failed list, history and status as any other.
///
/// ```swift
/// struct CRMContacts: CollectionSyncTask {
///     func upload(_ operations: [PendingOperation]) async throws -> [SyncTaskResult] {
///         var results: [SyncTaskResult] = []
///         for operation in operations {
///             let saved = try await crm.save(operation)            // throw on network failure: retried later
///             results.append(.applied(Record(id: operation.recordID, version: saved.revision, data: saved.fields)))
///         }
///         return results
///     }
/// }
/// configuration.syncTasks = ["contacts": CRMContacts()]
/// ```
public protocol CollectionSyncTask: Sendable {
    /// Applies `operations` (in queue order) and returns one result per operation, in the same order. Throwing
    /// (for a network failure) leaves them all queued for the next sync.
    func upload(_ operations: [PendingOperation]) async throws -> [SyncTaskResult]
}

/// What a ``CollectionSyncTask`` did with one operation, as the server's batch answers it.
public enum SyncTaskResult: Sendable, Hashable {
    /// Applied: the record as it now is (its version must grow with each change; a deletion is a tombstone).
    case applied(Record)
    /// Not applied, because the record changed since the operation's base version: the current state. The
    /// configured conflict resolver settles it and the resolution is uploaded again.
    case conflict(current: Record)
    /// Refused for good: the operation moves to the failed list with this error.
    case rejected(ErrorBody)
}

/// Work that runs on every full sync cycle (after the pull), such as fetching another API into a collection or a
/// ``JSONCache``. Register it in ``CairnConfiguration/automaticTasks``. Throwing fails the sync like a server error:
/// it is recorded in the history and status, and the scheduler retries with backoff.
///
/// ```swift
/// struct ExchangeRates: AutomaticSyncTask {
///     func run(_ client: CairnClient) async throws {
///         let rates = try client.jsonCache(name: "rates", fields: [.string("currency")])
///         try rates.cache(jsonArray: try await fetchRates())
///     }
/// }
/// ```
public protocol AutomaticSyncTask: Sendable {
    /// Runs once per full sync cycle.
    func run(_ client: CairnClient) async throws
}

extension SyncTaskResult {
    /// The result in the shape the store records server answers in.
    func scanned(opId: String) -> ScannedResult {
        switch self {
        case .applied(let record):
            return ScannedResult(
                opId: opId, status: .applied, version: record.version, deleted: record.deleted, updatedAt: record.updatedAt,
                updatedBy: record.updatedBy, dataText: record.deleted ? nil : JSONValue.object(record.data).jsonText())
        case .conflict(let current):
            return ScannedResult(opId: opId, status: .conflict, current: current)
        case .rejected(let error):
            return ScannedResult(opId: opId, status: .rejected, error: error)
        }
    }
}

/// A weak reference to a client, settable once it exists.
final class WeakClient: Sendable {
    private let box = Mutex<WeakReference>(WeakReference())
    private struct WeakReference: @unchecked Sendable { weak var client: CairnClient? }

    var client: CairnClient? { box.withLock { $0.client } }
    func set(_ client: CairnClient) { box.withLock { $0.client = client } }
}
