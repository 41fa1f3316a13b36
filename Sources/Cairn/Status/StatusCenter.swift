import CairnProtocol
import Foundation

/// One sync attempt, numbered in the order attempts started: its result is recorded only if no attempt that started
/// later has recorded one already.
struct SyncAttempt: Sendable, Hashable, Comparable {
    /// Its place among the attempts of this client, in the order they started.
    let number: Int

    static func < (lhs: SyncAttempt, rhs: SyncAttempt) -> Bool { lhs.number < rhs.number }
}

/// Holds the current ``SyncStatus`` and fans it (and ``SyncEvent``s) out to every listener.
///
/// The results of sync attempts are ordered by when the attempts started, not by when they ended: a failure of an
/// attempt that began during an outage and ended after a newer attempt succeeded never makes the status say the
/// last sync failed.
///
/// ```swift
/// let attempt = await center.begin(at: clock.now())
/// await center.end(attempt, at: clock.now(), error: nil)   // lastSyncCompleted, phase idle
/// ```
actor StatusCenter {
    private(set) var status = SyncStatus()
    private var statusListeners: [UUID: AsyncStream<SyncStatus>.Continuation] = [:]
    private var eventListeners: [UUID: AsyncStream<SyncEvent>.Continuation] = [:]
    /// How many attempts started.
    private var started = 0
    /// The newest attempt whose result the status shows.
    private var shown: SyncAttempt?

    func update(_ change: @Sendable (inout SyncStatus) -> Void) {
        change(&status)
        for listener in statusListeners.values { listener.yield(status) }
    }

    /// Notes that a sync attempt starts at `date`: the status shows it connecting, with no error yet.
    func begin(at date: Date) -> SyncAttempt {
        started += 1
        let attempt = SyncAttempt(number: started)
        update {
            $0.lastSyncStarted = date
            $0.lastError = nil
            $0.phase = .connecting
        }
        return attempt
    }

    /// Records how `attempt` ended at `date` (`error` nil: it succeeded), unless an attempt that started after it
    /// recorded its result already; the phase goes back to idle once no newer attempt runs. `change` (such as the
    /// queue's counts read afresh) goes into the same status update.
    func end(_ attempt: SyncAttempt, at date: Date, error: ErrorBody?, _ change: @Sendable (inout SyncStatus) -> Void = { _ in }) {
        let current = shown.map { attempt > $0 } ?? true
        if current { shown = attempt }
        let newest = attempt.number == started
        update {
            if current {
                $0.lastError = error
                if error == nil { $0.lastSyncCompleted = date }
            }
            if newest { $0.phase = .idle }
            change(&$0)
        }
    }

    func emit(_ event: SyncEvent) {
        for listener in eventListeners.values { listener.yield(event) }
    }

    func statusStream() -> AsyncStream<SyncStatus> {
        let id = UUID()
        // A few statuses are kept for a slow reader; older ones are dropped, the newest is never lost.
        let (stream, continuation) = AsyncStream<SyncStatus>.makeStream(bufferingPolicy: .bufferingNewest(16))
        continuation.yield(status)
        statusListeners[id] = continuation
        continuation.onTermination = { _ in Task { await self.removeStatus(id) } }
        return stream
    }

    func eventStream() -> AsyncStream<SyncEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<SyncEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        eventListeners[id] = continuation
        continuation.onTermination = { _ in Task { await self.removeEvent(id) } }
        return stream
    }

    func finish() {
        for listener in statusListeners.values { listener.finish() }
        for listener in eventListeners.values { listener.finish() }
        statusListeners.removeAll()
        eventListeners.removeAll()
    }

    private func removeStatus(_ id: UUID) { statusListeners[id] = nil }
    private func removeEvent(_ id: UUID) { eventListeners[id] = nil }
}
