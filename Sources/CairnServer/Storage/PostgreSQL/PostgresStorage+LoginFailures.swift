import Foundation
import PostgresNIO

extension PostgresStorage: LoginFailureLog {
    /// The failures of `user` in the shared table, so every instance counts every attempt.
    public func failures(of user: String, since: Date) async throws -> [LoginFailure] {
        guard !Self.holdsNUL(user) else { return [] }
        let rows = try await client.query(
            "SELECT address, at FROM login_failures WHERE \"user\" = \(user) AND at >= \(since.epochSeconds)", logger: logger)
        var failures: [LoginFailure] = []
        for try await (address, at) in rows.decode((String, Double).self) {
            failures.append(LoginFailure(address: address, at: Date(timeIntervalSince1970: at)))
        }
        return failures
    }

    /// Inserts the failure and deletes the user's older ones, in one statement.
    public func recordFailure(_ failure: LoginFailure, of user: String, forgettingBefore: Date) async throws {
        // No such user can exist, and no sign-in as one can succeed.
        guard !Self.holdsNUL(user), !Self.holdsNUL(failure.address) else { return }
        try await client.query(
            """
            WITH forgotten AS (DELETE FROM login_failures WHERE "user" = \(user) AND at < \(forgettingBefore.epochSeconds))
            INSERT INTO login_failures ("user", address, at) VALUES (\(user), \(failure.address), \(failure.at.epochSeconds))
            """, logger: logger)
    }

    /// Deletes the user's failures from `address`.
    public func clearFailures(of user: String, from address: String) async throws {
        guard !Self.holdsNUL(user), !Self.holdsNUL(address) else { return }
        try await client.query("DELETE FROM login_failures WHERE \"user\" = \(user) AND address = \(address)", logger: logger)
    }
}
