import Foundation

/// Counts failed logins per username and refuses further attempts for a while once too many failed, so a
/// password cannot be guessed online. The failures live in a ``LoginFailureLog``: this process's memory, or the
/// shared database when several instances serve one address, so an attacker gains nothing by spreading attempts.
struct LoginThrottle: Sendable {
    /// Where failures are remembered.
    let log: any LoginFailureLog
    /// Failures allowed within `window` before attempts are refused.
    let maximumFailures: Int
    /// How long failures are remembered, and how long a locked name stays locked.
    let window: TimeInterval

    /// Seconds until `username` may try again, or `nil` when an attempt is allowed now.
    func retryAfter(_ username: String, now: Date) async throws -> TimeInterval? {
        let recent = try await log.failures(of: username, since: now.addingTimeInterval(-window))
        guard recent.count >= maximumFailures, let oldest = recent.min() else { return nil }
        return max(1, window - now.timeIntervalSince(oldest))
    }

    /// Records a failed attempt.
    func recordFailure(_ username: String, now: Date) async throws {
        try await log.recordFailure(of: username, at: now, forgettingBefore: now.addingTimeInterval(-window))
    }

    /// Forgets the failures of a user who signed in.
    func recordSuccess(_ username: String) async throws { try await log.clearFailures(of: username) }
}

/// Where failed logins are remembered (see ``ServerStorage/loginFailures``).
public protocol LoginFailureLog: Sendable {
    /// The times `user` failed to sign in since `since`.
    func failures(of user: String, since: Date) async throws -> [Date]
    /// Remembers a failure at `time`, and may forget the user's failures before `forgettingBefore`.
    func recordFailure(of user: String, at time: Date, forgettingBefore: Date) async throws
    /// Forgets every failure of `user`.
    func clearFailures(of user: String) async throws
}

/// Failed logins remembered in this process: enough for one server instance.
actor MemoryLoginFailures: LoginFailureLog {
    private var failures: [String: [Date]] = [:]

    func failures(of user: String, since: Date) -> [Date] { (failures[user] ?? []).filter { $0 >= since } }

    func recordFailure(of user: String, at time: Date, forgettingBefore: Date) {
        var recent = (failures[user] ?? []).filter { $0 >= forgettingBefore }
        recent.append(time)
        failures[user] = recent
        if failures.count > 10_000 { failures = failures.filter { $0.value.contains { $0 >= forgettingBefore } } }
    }

    func clearFailures(of user: String) { failures[user] = nil }
}
