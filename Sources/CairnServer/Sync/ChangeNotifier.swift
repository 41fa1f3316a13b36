import CairnProtocol
import Foundation

/// Fans out live notices to the clients listening on a project's event stream, and, through a ``NoticeChannel``,
/// to those of the other instances on the same storage. Notices carry no data; a client that falls behind only
/// misses wake-ups, never changes, because it pulls anyway.
actor ChangeNotifier {
    private var listeners: [UUID: (project: String?, continuation: AsyncStream<ChangeNotice>.Continuation)] = [:]
    /// The other instances, when there are any.
    nonisolated let channel: (any NoticeChannel)?

    init(channel: (any NoticeChannel)? = nil) { self.channel = channel }

    /// A stream of the project's notices (every project's with `nil`, as the webhook outbox listens), ended when the
    /// caller stops iterating.
    func subscribe(project: String?) -> AsyncStream<ChangeNotice> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<ChangeNotice>.makeStream(bufferingPolicy: .bufferingNewest(100))
        listeners[id] = (project, continuation)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.remove(id) }
        }
        return stream
    }

    /// Sends one notice per changed collection to the project's listeners here, then to the other instances. A
    /// channel that fails is logged by the channel's owner and costs a wake-up only.
    nonisolated func publish(project: String, changes: [String: Int64]) async {
        guard !changes.isEmpty else { return }
        await deliver(project: project, changes: changes)
        try? await channel?.broadcast(project: project, changes: changes)
    }

    /// Sends one notice per changed collection to the project's listeners on this instance.
    func deliver(project: String, changes: [String: Int64]) {
        guard !changes.isEmpty else { return }
        let notices = changes.sorted(by: { $0.value < $1.value }).map { ChangeNotice(collection: $0.key, version: $0.value) }
        for listener in listeners.values where listener.project == nil || listener.project == project {
            for notice in notices { listener.continuation.yield(notice) }
        }
    }

    /// Ends every stream (at shutdown).
    func finishAll() {
        for listener in listeners.values { listener.continuation.finish() }
        listeners.removeAll()
    }

    private func remove(_ id: UUID) { listeners[id] = nil }
}
