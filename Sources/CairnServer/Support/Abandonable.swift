/// Waiting for work that may never end: a statement on a connection the database's restart cut can keep
/// postgres-nio waiting for ever, and neither a request nor the server's shutdown may wait with it. These helpers
/// wait for a task's result but stop waiting (cancelling the task and leaving it to end on its own) when the waiting
/// task is cancelled or, with a limit, when the limit passes first.
///
/// ```swift
/// let rows = try await Abandonable.value(of: Task { try await client.query(query, logger: logger) }, within: .seconds(30), timers: timers) {
///     ErrorBody(code: .unavailable, message: "PostgreSQL did not answer within 30 seconds")
/// }
/// ```
enum Abandonable {
    /// `work`'s result; `failure()` once `limit` passes first, and `CancellationError` at once when the caller is
    /// cancelled (`work` is then cancelled and not waited for). Without a limit, only cancellation stops the wait.
    static func value<T: Sendable>(
        of work: Task<T, any Error>, within limit: Duration? = nil, timers: any Clock<Duration> = ContinuousClock(),
        failure: @escaping @Sendable () -> any Error = { CancellationError() }
    ) async throws -> T {
        let (outcomes, outcome) = AsyncStream<Result<T, any Error>>.makeStream()
        let waiter = Task { outcome.yield(await work.result) }
        let timer = limit.map { limit in
            Task {
                try await timers.sleep(for: limit)
                outcome.yield(.failure(failure()))
            }
        }
        defer {
            timer?.cancel()
            waiter.cancel()
        }
        return try await withTaskCancellationHandler {
            for await result in outcomes {
                if case .failure = result { work.cancel() }
                return try result.get()
            }
            throw CancellationError()
        } onCancel: {
            work.cancel()
            outcome.yield(.failure(CancellationError()))
        }
    }
}
