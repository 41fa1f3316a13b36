import CairnProtocol
import Foundation
import PostgresNIO

extension PostgresStorage {
    /// Reads the member's claims text; `nil` when not a member.
    public func claims(user: String, project: String) async throws -> [String: JSONValue]? {
        let rows = try await client.query(
            "SELECT claims FROM members WHERE project = \(project) AND \"user\" = \(user)", logger: logger)
        for try await text in rows.decode(String.self) { return try ClaimsColumn.decode(text) }
        return nil
    }

    /// Replaces the member's claims; no membership changed is `not_found`.
    public func setClaims(user: String, project: String, claims: [String: JSONValue]) async throws {
        let rows = try await client.query(
            "UPDATE members SET claims = \(ClaimsColumn.encode(claims)) WHERE project = \(project) AND \"user\" = \(user) RETURNING 1",
            logger: logger)
        for try await _ in rows.decode(Int32.self) { return }
        throw ClaimsColumn.notMember(user: user, project: project)
    }

    /// Inserts the secret unless it is there, then reads it (another instance may have made it first).
    public func secret(named name: String, make: @Sendable () -> String) async throws -> String {
        let candidate = make()
        try await client.query(
            "INSERT INTO server_secrets (name, value) VALUES (\(name), \(candidate)) ON CONFLICT (name) DO NOTHING", logger: logger)
        let rows = try await client.query("SELECT value FROM server_secrets WHERE name = \(name)", logger: logger)
        for try await value in rows.decode(String.self) { return value }
        return candidate
    }

    /// Inserts the fingerprint's filter unless it is there.
    public func rememberReadScope(fingerprint: String, filterText: String) async throws {
        try await client.query(
            "INSERT INTO read_scopes (fingerprint, filter) VALUES (\(fingerprint), \(filterText)) ON CONFLICT (fingerprint) DO NOTHING",
            logger: logger)
    }

    /// Reads the fingerprint's filter.
    public func readScope(fingerprint: String) async throws -> String? {
        let rows = try await client.query("SELECT filter FROM read_scopes WHERE fingerprint = \(fingerprint)", logger: logger)
        for try await text in rows.decode(String.self) { return text }
        return nil
    }
}
