import Foundation

/// Holds the current ``SyncStatus`` and fans it (and ``SyncEvent``s) out to every listener.
actor StatusCenter {
    private(set) var status = SyncStatus()
    private var statusListeners: [UUID: AsyncStream<SyncStatus>.Continuation] = [:]
    private var eventListeners: [UUID: AsyncStream<SyncEvent>.Continuation] = [:]

    func update(_ change: @Sendable (inout SyncStatus) -> Void) {
        change(&status)
        for listener in statusListeners.values { listener.yield(status) }
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
