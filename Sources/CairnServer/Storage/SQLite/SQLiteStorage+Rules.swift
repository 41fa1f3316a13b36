import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    /// Reads the member's claims text; `nil` when not a member.
    public func claims(user: String, project: String) async throws -> [String: JSONValue]? {
        let text = try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT claims FROM members WHERE project = ? AND user = ?", arguments: [project, user])
        }
        return try text.map(ClaimsColumn.decode)
    }

    /// Replaces the member's claims; no membership changed is `not_found`.
    public func setClaims(user: String, project: String, claims: [String: JSONValue]) async throws {
        let text = ClaimsColumn.encode(claims)
        try await write { db in
            try db.execute(sql: "UPDATE members SET claims = ? WHERE project = ? AND user = ?", arguments: [text, project, user])
            guard db.changesCount == 1 else { throw ClaimsColumn.notMember(user: user, project: project) }
        }
    }

    /// Inserts the secret unless it is there, then reads it.
    public func secret(named name: String, make: @Sendable () -> String) async throws -> String {
        let candidate = make()
        return try await write { db in
            try db.execute(
                sql: "INSERT INTO server_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", arguments: [name, candidate])
            return try String.fetchOne(db, sql: "SELECT value FROM server_secrets WHERE name = ?", arguments: [name]) ?? candidate
        }
    }

    /// Inserts the fingerprint's filter unless it is there.
    public func rememberReadScope(fingerprint: String, filterText: String) async throws {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO read_scopes (fingerprint, filter) VALUES (?, ?) ON CONFLICT (fingerprint) DO NOTHING",
                arguments: [fingerprint, filterText])
        }
    }

    /// Reads the fingerprint's filter.
    public func readScope(fingerprint: String) async throws -> String? {
        try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT filter FROM read_scopes WHERE fingerprint = ?", arguments: [fingerprint])
        }
    }
}
