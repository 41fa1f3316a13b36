import Foundation
import PostgresNIO

extension PostgresStorage: LoginFailureLog {
    /// The failures of `user` in the shared table, so every instance counts every attempt.
    public func failures(of user: String, since: Date) async throws -> [Date] {
        guard !Self.holdsNUL(user) else { return [] }
        let rows = try await client.query(
            "SELECT at FROM login_failures WHERE \"user\" = \(user) AND at >= \(since.epochSeconds)", logger: logger)
        var times: [Date] = []
        for try await at in rows.decode(Double.self) { times.append(Date(timeIntervalSince1970: at)) }
        return times
    }

    /// Inserts the failure and deletes the user's older ones, in one statement.
    public func recordFailure(of user: String, at time: Date, forgettingBefore: Date) async throws {
        // No such user can exist, and no sign-in as one can succeed.
        guard !Self.holdsNUL(user) else { return }
        try await client.query(
            """
            WITH forgotten AS (DELETE FROM login_failures WHERE "user" = \(user) AND at < \(forgettingBefore.epochSeconds))
            INSERT INTO login_failures ("user", at) VALUES (\(user), \(time.epochSeconds))
            """, logger: logger)
    }

    /// Deletes the user's failures.
    public func clearFailures(of user: String) async throws {
        guard !Self.holdsNUL(user) else { return }
        try await client.query("DELETE FROM login_failures WHERE \"user\" = \(user)", logger: logger)
    }
}
