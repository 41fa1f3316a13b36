import CairnProtocol
import Synchronization

/// The files with a request moving their bytes right now: one upload, completion or sweep of a file at a time.
/// (Deletion does not wait for it: it changes the status first, and an upload that ends on a deleted file removes
/// its bytes again.)
/// A second request for a busy file is refused at once rather than queued: a client that lost its connection
/// asks for the offset and tries again.
final class UploadLocks: Sendable {
    private let busy = Mutex<Set<String>>([])

    /// Runs `body` holding the file's lock, or throws `error` at once when another request holds it.
    func withLock<T>(_ id: String, busy error: @autoclosure () -> ErrorBody, _ body: () async throws -> T) async throws -> T {
        guard busy.withLock({ $0.insert(id).inserted }) else { throw error() }
        defer { _ = busy.withLock { $0.remove(id) } }
        return try await body()
    }
}
