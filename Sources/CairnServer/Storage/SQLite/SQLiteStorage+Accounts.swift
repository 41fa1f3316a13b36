import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    /// Inserts the user; a taken name is `already_exists`, checked in the same write transaction.
    public func createUser(name: String, passwordHash: String) async throws {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE name = ?", arguments: [name]) == nil else {
                throw ErrorBody(code: .alreadyExists, message: "user \"\(name)\" already exists")
            }
            try db.execute(sql: "INSERT INTO users (name, password_hash) VALUES (?, ?)", arguments: [name, passwordHash])
        }
    }

    /// Updates the hash in place; no row changed is `not_found`. Issued tokens keep working.
    public func setPasswordHash(user: String, passwordHash: String) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE users SET password_hash = ? WHERE name = ?", arguments: [passwordHash, user])
            guard db.changesCount == 1 else { throw ErrorBody(code: .notFound, message: "user \"\(user)\" does not exist") }
        }
    }

    /// Reads the user from a WAL snapshot; `nil` for an unknown name.
    public func user(named name: String) async throws -> StoredUser? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT name, password_hash FROM users WHERE name = ?", arguments: [name]).map {
                StoredUser(name: $0["name"], passwordHash: $0["password_hash"])
            }
        }
    }

    /// Inserts the token row; a hash already stored fails (it is the primary key).
    public func insertToken(_ token: StoredToken) async throws {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO tokens (hash, kind, user, family, expires_at, revoked, used) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [token.hash, token.kind.rawValue, token.user, token.family, token.expiresAt.epochSeconds, token.revoked, token.used])
        }
    }

    /// Reads the token, expired, used or revoked alike; `nil` for an unknown hash.
    public func token(hash: String) async throws -> StoredToken? {
        try lookUp { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM tokens WHERE hash = ?"), arguments: [hash]).map { row in
                StoredToken(
                    hash: row["hash"], kind: TokenKind(rawValue: row["kind"]) ?? .access, user: row["user"], family: row["family"],
                    expiresAt: Date(timeIntervalSince1970: row["expires_at"]), revoked: row["revoked"], used: row["used"])
            }
        }
    }

    /// Sets `used` with one conditional `UPDATE`, so of two concurrent refreshes only one gets true; an access
    /// token or unknown hash also gives false.
    public func consumeRefreshToken(hash: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE tokens SET used = 1 WHERE hash = ? AND kind = 'refresh' AND used = 0", arguments: [hash])
            return db.changesCount == 1
        }
    }

    /// Sets `revoked` on every token of the family (indexed); an unknown family changes nothing.
    public func revokeTokenFamily(_ family: String) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE tokens SET revoked = 1 WHERE family = ?", arguments: [family])
        }
    }
}
