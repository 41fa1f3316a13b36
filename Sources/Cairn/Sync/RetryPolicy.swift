import Foundation

/// Capped exponential backoff with jitter, as a pure value: it says how long to wait before attempt `n`.
///
/// ```swift
/// let policy = RetryPolicy(initialDelay: .milliseconds(200), maximumDelay: .seconds(30), maximumAttempts: 5)
/// policy.delay(beforeAttempt: 3)  // 400 ms, ± up to half of it
/// ```
public struct RetryPolicy: Sendable, Equatable {
    /// The wait before the first retry.
    public var initialDelay: Duration
    /// No wait is longer than this.
    public var maximumDelay: Duration
    /// Attempts of one call before it fails (the first try counts).
    public var maximumAttempts: Int
    /// Attempts of one call whose connection the server refused (the first try counts; never more than
    /// ``maximumAttempts``). A refused connection is a definite answer, nothing listens there now: by default one quick
    /// retry follows it, then the call fails.
    public var maximumRefusedAttempts: Int
    /// The fraction of each delay that is random (0 = none, 1 = anywhere from 0 to twice the delay).
    public var jitter: Double

    /// A policy; `maximumAttempts` and `maximumRefusedAttempts` are at least 1 and `jitter` is clamped to 0...1.
    public init(
        initialDelay: Duration = .milliseconds(250), maximumDelay: Duration = .seconds(30), maximumAttempts: Int = 4, jitter: Double = 0.5,
        maximumRefusedAttempts: Int = 2
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.maximumAttempts = max(1, maximumAttempts)
        self.maximumRefusedAttempts = max(1, maximumRefusedAttempts)
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The wait before attempt `attempt` (2 is the first retry), given a random `unit` in 0...1.
    public func delay(beforeAttempt attempt: Int, unit: Double = Double.random(in: 0...1)) -> Duration {
        guard attempt > 1 else { return .zero }
        let base = initialDelay * Int(min(1 << min(attempt - 2, 30), Int(Int32.max)))
        let capped = min(base, maximumDelay)
        let factor = 1 + jitter * (2 * unit - 1)
        return min(capped * factor, maximumDelay)
    }

    /// Whether a retry planned for the wall-clock time `retryAt` is due at `now`. A retry further off than this
    /// policy ever waits means the device's clock was set back after it was planned: it is due now, rather than
    /// hours or days later.
    ///
    /// ```swift
    /// policy.isDue(retryAt: job.nextAttemptAt, now: clock.now())
    /// ```
    public func isDue(retryAt: Date, now: Date) -> Bool {
        retryAt <= now || retryAt.timeIntervalSince(now) > maximumDelay.timeInterval
    }

    /// Whether another attempt follows attempt `attempt`; `refused` when the server refused its connection.
    public func shouldRetry(after attempt: Int, refused: Bool = false) -> Bool {
        attempt < (refused ? min(maximumRefusedAttempts, maximumAttempts) : maximumAttempts)
    }
}
