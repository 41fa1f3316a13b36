import CairnProtocol
import Foundation

extension SyncEngine {
    /// Sends the oldest queued action call once every write queued before it was acknowledged, and stores its
    /// outcome (the call leaves the queue in the same transaction). Returns false when no call is ready. A call
    /// whose outcome is not settled (``CairnError/settlesActionCall``: the network, a `5xx`, a retryable
    /// `action_failed`) stays queued and its error ends the push, so the writes queued after it stay behind it; it
    /// is sent again with the same idempotency key, which the server answers once.
    func pushNextAction(into summary: inout SyncSummary) async throws -> Bool {
        guard !isCancelled(.upload), let call = try await store.offPool({ try $0.actions.takeReady() }) else { return false }
        do {
            let answer = try await api.callAction(call.action, arguments: call.arguments, idempotencyKey: call.key, device: configuration.device)
            try await store.offPool { try $0.actions.complete(call, result: answer.result, error: nil) }
        } catch {
            let failure = CairnError(wrapping: error)
            guard failure.settlesActionCall else { throw failure }
            try await store.offPool { try $0.actions.complete(call, result: nil, error: failure) }
        }
        summary.actions += 1
        await noteUploadProgress(1)
        await status.update { $0.pendingUploads = max(0, $0.pendingUploads - 1) }
        return true
    }
}
