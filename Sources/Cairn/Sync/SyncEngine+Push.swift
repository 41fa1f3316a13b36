import CairnProtocol
import Foundation

extension SyncEngine {
    /// Uploads the queue in batches until nothing is ready. Each batch's operations were marked attempted before
    /// sending, so a retry after a lost response sends the very same operations with the same opIds.
    func push(into summary: inout SyncSummary) async throws {
        let batchSize = min(max(configuration.batchSize, 1), 1000)
        // Two batches in flight, and the next upload starts before the answers of the previous one are recorded,
        // so the server is never idle while the client writes.
        var inFlight: [(batch: [PendingOperation], upload: Task<[ScannedResult], any Error>)] = []
        defer { for entry in inFlight { entry.upload.cancel() } }
        func fill(excluding answered: [PendingOperation]) throws {
            while inFlight.count < 2 {
                let newest = (inFlight.flatMap { $0.batch.map(\.sequence) } + answered.map(\.sequence)).max() ?? 0
                let batch = try store.takeBatch(limit: batchSize, after: newest)
                guard !batch.isEmpty else { return }
                inFlight.append((batch, Task { try await self.upload(batch) }))
            }
        }
        while true {
            try Task.checkCancellation()
            try fill(excluding: [])
            guard !inFlight.isEmpty else { return }
            let (batch, upload) = inFlight.removeFirst()
            let results = try await upload.value
            try fill(excluding: batch)
            let conflicts = try store.recordAnswers(results, for: batch)
            summary.pushed += results.filter { $0.status == .applied }.count
            summary.failed += results.filter { $0.status == .rejected }.count
            for (operation, current) in conflicts {
                let conflict = try store.conflict(for: operation, current: current)
                let resolver = configuration.collectionResolvers[operation.collection] ?? configuration.conflictResolver
                let resolution: Resolution
                do {
                    resolution = try await resolver.resolve(conflict)
                } catch {
                    // The change stays queued and the conflict unresolved; the app's error is the cause.
                    throw CairnError(
                        .resolverFailed, "The conflict resolver for \(operation.collection) threw \(type(of: error)); the change stays queued",
                        details: ["collection": .string(operation.collection), "id": .string(operation.recordID)], cause: error)
                }
                try store.resolve(conflict, resolution: resolution, current: current)
                summary.conflicts += 1
                await status.emit(.conflictResolved(collection: operation.collection, id: operation.recordID, resolution: resolution.kind))
            }
            let applied = results.filter { $0.status == .applied }.count
            await status.update { $0.pendingUploads = max(0, $0.pendingUploads - applied) }
        }
    }
}
