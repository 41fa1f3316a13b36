import Foundation

/// The work a client does beside the app's calls (file uploads, downloads, prefetch, progress reports): children of
/// one task group the client owns, so none outlives it. ``close()`` cancels them all and returns once every one has
/// ended; work offered after that is refused.
///
/// ```swift
/// let work = BackgroundWork()
/// work.start { await uploader.kick() }                        // runs beside the caller
/// let url = try await work.perform { try await download() }   // runs in the group, answers the caller
/// await work.close()                                          // cancels both and waits for them
/// ```
final class BackgroundWork: Sendable {
    typealias Job = @Sendable () async -> Void

    private let jobs: AsyncStream<Job>.Continuation
    private let group: Task<Void, Never>

    init() {
        let (stream, jobs) = AsyncStream<Job>.makeStream()
        self.jobs = jobs
        // The group's task holds the stream only, never `self`: a client dropped without closing still ends it.
        group = Task {
            await withDiscardingTaskGroup { group in
                // After `close()` the stream still hands out what was offered before; those children start cancelled.
                for await job in stream { group.addTask { await job() } }
            }
        }
    }

    deinit { jobs.finish() }

    /// Runs `job` beside the caller; false (and `job` does not run) once the client is closed.
    @discardableResult
    func start(_ job: @escaping Job) -> Bool {
        if case .terminated = jobs.yield(job) { return false }
        return true
    }

    /// Runs `body` in the group and returns its result to the caller; cancelled when the client closes (cancelling
    /// the caller does not cancel it: another caller may be waiting for the same work).
    /// - Throws: what `body` throws; `signed_out` once the client is closed.
    func perform<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let started = start {
                do { continuation.resume(returning: try await body()) } catch { continuation.resume(throwing: error) }
            }
            if !started { continuation.resume(throwing: CairnError.clientClosed) }
        }
    }

    /// Refuses new work, cancels the work under way and waits until all of it has ended.
    func close() async {
        jobs.finish()
        group.cancel()
        await group.value
    }
}

extension CairnError {
    /// The error of a call on a client that was closed, signed out or cleared.
    static var clientClosed: CairnError { CairnError(.signedOut, "This client was signed out or cleared; open a new one") }
}
