import CairnProtocol
import Foundation

extension SyncEngine {
    /// Uploads one batch: the operations of collections with a ``CollectionSyncTask`` go to their task, the rest to
    /// the server; the answers come back in the batch's order.
    nonisolated func upload(_ batch: [PendingOperation]) async throws -> [ScannedResult] {
        let tasks = configuration.syncTasks
        guard !tasks.isEmpty, batch.contains(where: { tasks[$0.collection] != nil }) else { return try await api.batch(batch) }
        var answers: [String: ScannedResult] = [:]
        let forServer = batch.filter { tasks[$0.collection] == nil }
        if !forServer.isEmpty {
            for result in try await api.batch(forServer) { answers[result.opId] = result }
        }
        let byCollection = Dictionary(grouping: batch.filter { tasks[$0.collection] != nil }, by: \.collection)
        for (collection, operations) in byCollection.sorted(by: { $0.key < $1.key }) {
            let results = try await tasks[collection]!.upload(operations)
            guard results.count == operations.count else {
                throw CairnError.badResponse("the sync task of \(collection) answered \(results.count) results for \(operations.count) operations")
            }
            for (operation, result) in zip(operations, results) { answers[operation.opId] = result.scanned(opId: operation.opId) }
        }
        return try batch.map { operation in
            guard let answer = answers[operation.opId] else { throw CairnError.badResponse("no answer for operation \(operation.opId)") }
            return answer
        }
    }
}
