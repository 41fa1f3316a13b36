import Foundation

/// How a server delivers webhooks. The defaults are the protocol's: a 10 s timeout, backoff from 1 s doubling to
/// 5 minutes, `failing` after 24 hours of failures.
///
/// ```swift
/// var configuration = ServerConfiguration(dataDirectory: directory)
/// configuration.webhooks.retryBase = 0.05   // a test's receiver that fails for a while
/// ```
public struct WebhookSettings: Sendable, Hashable {
    /// How long a receiver has to answer a delivery.
    public var timeout: TimeInterval = 10
    /// The wait after the first failure; each further failure doubles it.
    public var retryBase: TimeInterval = 1
    /// The longest wait between attempts.
    public var retryCap: TimeInterval = 300
    /// After how long of failing a webhook is marked `failing` (it keeps its place and goes on retrying).
    public var failingAfter: TimeInterval = 24 * 3600
    /// How often the outbox looks for work besides the live notices that wake it (changes another instance made
    /// while its notice was lost, retries another instance scheduled).
    public var pollInterval: TimeInterval = 5
    /// How long an instance's delivery lease lasts without renewal: another instance takes over a webhook after a
    /// killed one's lease runs out.
    public var lease: TimeInterval = 60
    /// The most changes in one delivery.
    public var batchSize = 100

    /// The defaults.
    public init() {}

    /// The lease an instance takes: ``lease``, but always longer than three attempts, so that a lease never runs out
    /// while the attempt that took it is still open (each attempt renews it).
    var effectiveLease: TimeInterval { max(lease, 3 * timeout) }

    /// The wait before the next attempt after `failures` failures in a row.
    func retryDelay(afterFailures failures: Int64) -> TimeInterval {
        min(retryCap, retryBase * pow(2, Double(min(max(failures - 1, 0), 30))))
    }

    /// `ok`, `retrying` or `failing`, for a webhook as stored, at `now`.
    func status(of webhook: StoredWebhook, now: Date) -> String {
        guard let since = webhook.failingSince else { return "ok" }
        return now.timeIntervalSince(since) >= failingAfter ? "failing" : "retrying"
    }
}
