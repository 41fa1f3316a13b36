import Foundation

/// A serial dispatch queue for blocking work: a SQLite transaction, which may wait for the database's lock and for
/// the disk, or the reading of a large pulled page. The awaiting task holds no thread meanwhile, so an app's other
/// tasks keep every thread of Swift's cooperative pool.
///
/// ```swift
/// let queue = BlockingQueue(label: "cairn.store")
/// let count = try await queue.run { try store.uploads.counts().pending }
/// ```
struct BlockingQueue: Sendable {
    private let queue: DispatchQueue

    /// A queue named `label` (shown in debuggers and crash reports).
    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `work` on the queue, after the work queued before it, and returns its result.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Queues `work` after the work queued before it, and returns at once.
    func start(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }
}
