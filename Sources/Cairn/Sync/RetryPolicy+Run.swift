import Foundation

extension RetryPolicy {
    /// Runs `attempt` until it succeeds, or it throws a ``CairnError`` that `retries` declines (or any other error), or
    /// the policy's attempts run out; before each retry, tells `willRetry` (the number of the next attempt and the
    /// wait) and waits on `clock`. The one retry loop of requests and file downloads.
    ///
    /// ```swift
    /// let answer = try await policy.run(on: clock, retries: { $0.isRetryable }) { try await send() }
    /// ```
    func run<T>(
        on clock: any Clock<Duration>, retries: (CairnError) -> Bool, willRetry: (Int, Duration, CairnError) -> Void = { _, _, _ in },
        isolation: isolated (any Actor)? = #isolation, _ attempt: () async throws -> T
    ) async throws -> T {
        var number = 1
        while true {
            do {
                return try await attempt()
            } catch let error as CairnError where retries(error) && shouldRetry(after: number, refused: error.connectionRefused) {
                number += 1
                let delay = delay(beforeAttempt: number)
                willRetry(number, delay, error)
                try await clock.sleep(for: delay)
            }
        }
    }
}
