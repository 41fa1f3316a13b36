import Foundation
import Logging
import Synchronization

/// Whether the server is in an episode of full storage: from a write refused for lack of space (``OutOfSpace``)
/// until a write succeeds again or a probe finds room. It logs each episode once (not each refused request), counts
/// the refusals in ``ServerMetrics``, and lets `/ready` answer `503` while the episode lasts.
///
/// ```swift
/// space.refused(error)                      // a batch failed with SQLITE_FULL: 507, logged once per episode
/// let reason = await space.fullReason()     // /ready: nil once a probe of the storage finds room
/// ```
final class StorageSpaceMonitor: Sendable {
    private let storage: any ServerStorage
    private let metrics: ServerMetrics
    private let logger: Logger
    /// The episode under way: when it started, and what the storage said.
    private let episode = Mutex<(since: Date, reason: String)?>(nil)

    init(storage: any ServerStorage, metrics: ServerMetrics, logger: Logger) {
        self.storage = storage
        self.metrics = metrics
        self.logger = logger
    }

    /// Whether an episode is under way.
    var isFull: Bool { episode.withLock { $0 != nil } }

    /// A write failed for lack of space: counted; the first refusal of an episode is logged, with the storage's words.
    func refused(_ error: any Error) {
        let reason = storage.describe(error)
        let started = episode.withLock { episode -> Bool in
            guard episode == nil else { return false }
            episode = (Date(), reason)
            return true
        }
        metrics.storageFull(refused: 1, full: true)
        if started {
            logger.error(
                "storage is full: writes are refused (507 storage_full, /ready 503) until space returns",
                metadata: ["reason": .string(reason)])
        }
    }

    /// A write succeeded: an episode under way ends (logged once).
    func wrote() {
        guard isFull else { return }
        end(how: "a write succeeded")
    }

    /// Why the storage is full, for `/ready`; `nil` when it is not, or when a probe of the storage (a small write
    /// where it keeps its data, ``ServerStorage/probeSpace()``) now succeeds, which ends the episode.
    func fullReason() async -> String? {
        guard let current = episode.withLock({ $0 }) else { return nil }
        do {
            try await storage.probeSpace()
        } catch {
            return current.reason
        }
        end(how: "a probe wrote")
        return nil
    }

    private func end(how: String) {
        let ended = episode.withLock { episode -> Date? in
            defer { episode = nil }
            return episode?.since
        }
        guard let since = ended else { return }
        metrics.storageFull(refused: 0, full: false)
        logger.notice(
            "storage has room again: writes are accepted",
            metadata: ["how": .string(how), "fullForSeconds": .stringConvertible(Int(Date().timeIntervalSince(since)))])
    }
}
