import CairnProtocol
import Foundation

extension SyncEngine {
    /// Uploads the queue in batches until nothing is ready. Each batch's operations were marked attempted before
    /// sending, so a retry after a lost response sends the very same operations with the same opIds. A batch holds
    /// at most ``CairnConfiguration/batchSize`` operations and ``CairnConfiguration/batchBytes`` bytes of them, or one
    /// change set whole, sent as an atomic batch. An action call queued between writes goes when the writes before it
    /// were answered, and the writes after it wait for its outcome (``pushNextAction(into:)``).
    ///
    /// - Parameter groups: only changes of these upload groups go, and no action call; `nil`: every change not held.
    func push(groups: Set<String>? = nil, into summary: inout SyncSummary) async throws {
        let batchSize = min(max(configuration.batchSize, 1), BatchRequest.defaultMaximumOperations)
        let batchBytes = max(configuration.batchBytes, 1)
        // Two batches in flight, and the next upload starts before the answers of the previous one are recorded,
        // so the server is never idle while the client writes.
        var inFlight: [(batch: [PendingOperation], upload: Task<[ScannedResult], any Error>)] = []
        defer { for entry in inFlight { entry.upload.cancel() } }
        while true {
            try Task.checkCancellation()
            for batch in try await takeBatches(
                2 - inFlight.count, size: batchSize, bytes: batchBytes, after: Self.newestSequence(inFlight.map(\.batch)), groups: groups
            ) {
                inFlight.append((batch, Task { try await self.uploadWithin(batch) }))
            }
            if inFlight.isEmpty {
                // Every write that may go now went: an action call queued after them goes next, then what it held back.
                guard groups == nil, try await pushNextAction(into: &summary) else { return }
                continue
            }
            let (batch, upload) = inFlight.removeFirst()
            let results = try await upload.value
            for next in try await takeBatches(
                2 - inFlight.count, size: batchSize, bytes: batchBytes, after: Self.newestSequence(inFlight.map(\.batch) + [batch]), groups: groups
            ) {
                inFlight.append((next, Task { try await self.uploadWithin(next) }))
            }
            let conflicts = try await store.offPool { try $0.uploads.recordAnswers(results, for: batch) }
            await noteUploadProgress(batch.count)
            let setFailed = batch.first?.changeSet != nil && results.contains { $0.status != .applied }
            let applied = results.filter { $0.status == .applied }.count
            let refused = results.filter { $0.status == .rejected }.count
            summary.pushed += applied
            summary.failed += setFailed ? batch.count : refused
            for (operation, result) in zip(batch, results) where result.status == .rejected || setFailed {
                log.changeRefused(operation, result.setRefusal)
                let refusal = result.setRefusal
                refusedInRun.append([
                    "opId": .string(operation.opId), "collection": .string(operation.collection), "id": .string(operation.recordID),
                    "code": .string(refusal.code.rawValue), "message": .string(refusal.message),
                ])
            }
            if setFailed, let changeSet = batch.first?.changeSet,
                let cause = results.lazy.map(\.setRefusal).first(where: { $0.code != .batchAborted })
            {
                log.changeSetRefused(changeSet, operations: batch.count, cause: cause)
            }
            log.batchPushed(operations: batch.count, applied: applied, refused: refused, conflicts: conflicts.count)
            for (operation, current) in conflicts {
                let conflict = try await store.offPool { try $0.uploads.conflict(for: operation, current: current) }
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
                try await store.offPool { try $0.uploads.resolve(conflict, resolution: resolution, current: current) }
                summary.conflicts += 1
                await status.emit(.conflictResolved(collection: operation.collection, id: operation.recordID, resolution: resolution.kind))
                log.conflictResolved(collection: operation.collection, id: operation.recordID, resolution: resolution.kind)
            }
            await status.update { $0.pendingUploads = max(0, $0.pendingUploads - applied) }
        }
    }

    /// Uploads a batch. When the server finds it too large (`413`), its operations are sent again one at a time; a
    /// change set cannot be split, and an operation too large on its own cannot be sent: they are refused with the
    /// server's `payload_too_large` and go to the failed list, so they never block the queue.
    nonisolated func uploadWithin(_ batch: [PendingOperation]) async throws -> [ScannedResult] {
        do {
            return try await upload(batch)
        } catch let error as CairnError where error.httpStatus == 413 {
            guard batch.count > 1, batch.first?.changeSet == nil else {
                let refusal = ErrorBody(code: error.code, message: error.message, details: error.details)
                return batch.map { ScannedResult(opId: $0.opId, status: .rejected, error: refusal) }
            }
            var results: [ScannedResult] = []
            for operation in batch { results += try await uploadWithin([operation]) }
            return results
        }
    }

    /// The queue position of the newest operation in `batches` (sent or being sent), 0 when there are none; read in
    /// place, without copying the operations.
    private static func newestSequence(_ batches: [[PendingOperation]]) -> Int64 {
        batches.lazy.compactMap { $0.lazy.map(\.sequence).max() }.max() ?? 0
    }

    /// Takes up to `count` batches from the queue, after queue position `newest`, in one turn on the store's queue.
    private func takeBatches(_ count: Int, size: Int, bytes: Int, after newest: Int64, groups: Set<String>?) async throws -> [[PendingOperation]] {
        // After cancelUpload() no batch is taken: those in flight are answered and recorded, then the push ends.
        guard count > 0, !isCancelled(.upload) else { return [] }
        return try await store.offPool { store in
            var batches: [[PendingOperation]] = []
            var after = newest
            while batches.count < count {
                let batch = try store.uploads.takeBatch(limit: size, bytes: bytes, after: after, groups: groups)
                guard let last = batch.map(\.sequence).max() else { break }
                batches.append(batch)
                after = last
            }
            return batches
        }
    }
}
