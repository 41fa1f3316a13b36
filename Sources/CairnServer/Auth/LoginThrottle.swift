import Foundation

/// Counts failed logins per username and refuses further attempts for a while once too many failed, so a
/// password cannot be guessed online. A pure value type: the server keeps one inside an actor.
struct LoginThrottle: Sendable {
    /// Failures allowed within `window` before attempts are refused.
    var maximumFailures: Int
    /// How long failures are remembered, and how long a locked name stays locked.
    var window: TimeInterval
    private var failures: [String: [Date]] = [:]

    init(maximumFailures: Int = 5, window: TimeInterval = 300) {
        self.maximumFailures = maximumFailures
        self.window = window
    }

    /// Seconds until `username` may try again, or `nil` when an attempt is allowed now.
    func retryAfter(_ username: String, now: Date) -> TimeInterval? {
        let recent = (failures[username] ?? []).filter { now.timeIntervalSince($0) < window }
        guard recent.count >= maximumFailures, let oldest = recent.first else { return nil }
        return max(1, window - now.timeIntervalSince(oldest))
    }

    /// Records a failed attempt.
    mutating func recordFailure(_ username: String, now: Date) {
        var recent = (failures[username] ?? []).filter { now.timeIntervalSince($0) < window }
        recent.append(now)
        failures[username] = recent
        if failures.count > 10_000 { failures = failures.filter { $0.value.contains { now.timeIntervalSince($0) < window } } }
    }

    /// Forgets the failures of a user who signed in.
    mutating func recordSuccess(_ username: String) { failures[username] = nil }
}
