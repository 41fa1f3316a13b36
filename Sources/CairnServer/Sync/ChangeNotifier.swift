import CairnProtocol
import Foundation

/// Fans out live notices to the clients listening on a project's event stream. Notices carry no data; a client
/// that falls behind only misses wake-ups, never changes, because it pulls anyway.
actor ChangeNotifier {
    private var listeners: [UUID: (project: String, continuation: AsyncStream<ChangeNotice>.Continuation)] = [:]

    /// A stream of the project's notices, ended when the caller stops iterating.
    func subscribe(project: String) -> AsyncStream<ChangeNotice> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<ChangeNotice>.makeStream(bufferingPolicy: .bufferingNewest(100))
        listeners[id] = (project, continuation)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.remove(id) }
        }
        return stream
    }

    /// Sends one notice per changed collection to the project's listeners.
    func publish(project: String, changes: [String: Int64]) {
        guard !changes.isEmpty else { return }
        let notices = changes.sorted(by: { $0.value < $1.value }).map { ChangeNotice(collection: $0.key, version: $0.value) }
        for listener in listeners.values where listener.project == project {
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
