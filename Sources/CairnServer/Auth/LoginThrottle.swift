import Foundation

/// Counts failed logins per username and client address, and refuses further attempts from that address for a
/// while once too many failed, so a password cannot be guessed online, while the real user, signing in from
/// another address, still gets in: a stranger's guesses cannot lock a user out. Across all addresses together a
/// name takes ten times as many failures before it is locked everywhere, so a guesser who spreads attempts over
/// many addresses is still slowed down (at the price that such a guesser can lock the name out, as before).
/// The failures live in a ``LoginFailureLog``: this process's memory, or the shared database when several
/// instances serve one address, so an attacker gains nothing by spreading attempts over instances.
struct LoginThrottle: Sendable {
    /// Where failures are remembered.
    let log: any LoginFailureLog
    /// Failures allowed within `window` for one username from one address before attempts from it are refused.
    let maximumFailures: Int
    /// How long failures are remembered, and how long a locked name stays locked.
    let window: TimeInterval

    /// Failures allowed within `window` for one username from all addresses together.
    var maximumFailuresPerUser: Int { maximumFailures * 10 }

    /// Seconds until `username` may try again from `address`, or `nil` when an attempt is allowed now.
    func retryAfter(_ username: String, from address: String, now: Date) async throws -> TimeInterval? {
        let recent = try await log.failures(of: username, since: now.addingTimeInterval(-window))
        let fromAddress = recent.filter { $0.address == address }.map(\.at)
        let wait = [(fromAddress, maximumFailures), (recent.map(\.at), maximumFailuresPerUser)].compactMap { times, maximum -> TimeInterval? in
            guard times.count >= maximum, let oldest = times.sorted().suffix(maximum).first else { return nil }
            return max(1, window - now.timeIntervalSince(oldest))
        }
        return wait.max()
    }

    /// Records a failed attempt from `address`.
    func recordFailure(_ username: String, from address: String, now: Date) async throws {
        try await log.recordFailure(LoginFailure(address: address, at: now), of: username, forgettingBefore: now.addingTimeInterval(-window))
    }

    /// Forgets the failures from `address` of a user who signed in from it.
    func recordSuccess(_ username: String, from address: String) async throws { try await log.clearFailures(of: username, from: address) }
}

/// One failed sign-in: where from, and when.
public struct LoginFailure: Sendable, Hashable {
    /// The client's IP address (`""` when unknown).
    public var address: String
    /// When it failed.
    public var at: Date

    /// A failure from `address` at `at`.
    public init(address: String, at: Date) {
        self.address = address
        self.at = at
    }
}

/// Where failed logins are remembered (see ``ServerStorage/loginFailures``).
public protocol LoginFailureLog: Sendable {
    /// The failures of `user`, from every address, since `since`.
    func failures(of user: String, since: Date) async throws -> [LoginFailure]
    /// Remembers `failure`, and may forget the user's failures before `forgettingBefore`.
    func recordFailure(_ failure: LoginFailure, of user: String, forgettingBefore: Date) async throws
    /// Forgets the failures of `user` from `address`.
    func clearFailures(of user: String, from address: String) async throws
}

/// Failed logins remembered in this process: enough for one server instance.
actor MemoryLoginFailures: LoginFailureLog {
    private var failures: [String: [LoginFailure]] = [:]

    func failures(of user: String, since: Date) -> [LoginFailure] { (failures[user] ?? []).filter { $0.at >= since } }

    func recordFailure(_ failure: LoginFailure, of user: String, forgettingBefore: Date) {
        var recent = (failures[user] ?? []).filter { $0.at >= forgettingBefore }
        recent.append(failure)
        failures[user] = recent
        if failures.count > 10_000 { failures = failures.filter { $0.value.contains { $0.at >= forgettingBefore } } }
    }

    func clearFailures(of user: String, from address: String) {
        failures[user]?.removeAll { $0.address == address }
        if failures[user]?.isEmpty == true { failures[user] = nil }
    }
}
