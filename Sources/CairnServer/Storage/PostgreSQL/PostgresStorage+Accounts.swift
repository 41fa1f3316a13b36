import CairnProtocol
import Foundation
import PostgresNIO

extension PostgresStorage {
    /// Inserts the user; a taken name is `already_exists` (the primary key decides, whatever instance asks).
    public func createUser(name: String, passwordHash: String) async throws {
        do {
            try await client.query("INSERT INTO users (name, password_hash) VALUES (\(name), \(passwordHash))", logger: logger)
        } catch let error where Self.isUniqueViolation(error) {
            throw ErrorBody(code: .alreadyExists, message: "user \"\(name)\" already exists")
        }
    }

    /// Updates the hash in place; an unknown user is `not_found`. Issued tokens keep working.
    public func setPasswordHash(user: String, passwordHash: String) async throws {
        let rows = try await client.query(
            "UPDATE users SET password_hash = \(passwordHash) WHERE name = \(user) RETURNING name", logger: logger)
        guard try await rows.decode(String.self).first(where: { _ in true }) != nil else {
            throw ErrorBody(code: .notFound, message: "user \"\(user)\" does not exist")
        }
    }

    /// The user named `name`, or nil.
    public func user(named name: String) async throws -> StoredUser? {
        guard !Self.holdsNUL(name) else { return nil }
        let rows = try await client.query("SELECT name, password_hash FROM users WHERE name = \(name)", logger: logger)
        for try await (name, hash) in rows.decode((String, String).self) { return StoredUser(name: name, passwordHash: hash) }
        return nil
    }

    /// Inserts the token row; a hash already stored fails (it is the primary key).
    public func insertToken(_ token: StoredToken) async throws {
        try await client.query(
            """
            INSERT INTO tokens (hash, kind, "user", family, expires_at, revoked, used)
            VALUES (\(token.hash), \(token.kind.rawValue), \(token.user), \(token.family), \(token.expiresAt.epochSeconds),
                    \(token.revoked), \(token.used))
            """, logger: logger)
    }

    /// The token, expired, used or revoked alike; nil for an unknown hash.
    public func token(hash: String) async throws -> StoredToken? {
        let rows = try await client.query(
            "SELECT hash, kind, \"user\", family, expires_at, revoked, used FROM tokens WHERE hash = \(hash)", logger: logger)
        for try await (hash, kind, user, family, expires, revoked, used) in rows.decode((String, String, String, String, Double, Bool, Bool).self) {
            return StoredToken(
                hash: hash, kind: TokenKind(rawValue: kind) ?? .access, user: user, family: family,
                expiresAt: Date(timeIntervalSince1970: expires), revoked: revoked, used: used)
        }
        return nil
    }

    /// Sets `used` with one conditional `UPDATE`: of two refreshes at once, on any instances, only one gets true.
    public func consumeRefreshToken(hash: String) async throws -> Bool {
        let rows = try await client.query(
            "UPDATE tokens SET used = true WHERE hash = \(hash) AND kind = 'refresh' AND NOT used RETURNING hash", logger: logger)
        return try await rows.decode(String.self).first(where: { _ in true }) != nil
    }

    /// Sets `revoked` on every token of the family.
    public func revokeTokenFamily(_ family: String) async throws {
        try await client.query("UPDATE tokens SET revoked = true WHERE family = \(family)", logger: logger)
    }
}
