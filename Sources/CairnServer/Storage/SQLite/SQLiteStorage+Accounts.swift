import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    public func createUser(name: String, passwordHash: String) async throws {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE name = ?", arguments: [name]) == nil else {
                throw ErrorBody(code: .alreadyExists, message: "user \"\(name)\" already exists")
            }
            try db.execute(sql: "INSERT INTO users (name, password_hash) VALUES (?, ?)", arguments: [name, passwordHash])
        }
    }

    public func setPasswordHash(user: String, passwordHash: String) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE users SET password_hash = ? WHERE name = ?", arguments: [passwordHash, user])
            guard db.changesCount == 1 else { throw ErrorBody(code: .notFound, message: "user \"\(user)\" does not exist") }
        }
    }

    public func user(named name: String) async throws -> StoredUser? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT name, password_hash FROM users WHERE name = ?", arguments: [name]).map {
                StoredUser(name: $0["name"], passwordHash: $0["password_hash"])
            }
        }
    }

    public func insertToken(_ token: StoredToken) async throws {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO tokens (hash, kind, user, family, expires_at, revoked, used) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [token.hash, token.kind.rawValue, token.user, token.family, token.expiresAt.epochSeconds, token.revoked, token.used])
        }
    }

    public func token(hash: String) async throws -> StoredToken? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM tokens WHERE hash = ?", arguments: [hash]).map { row in
                StoredToken(
                    hash: row["hash"], kind: TokenKind(rawValue: row["kind"]) ?? .access, user: row["user"], family: row["family"],
                    expiresAt: Date(timeIntervalSince1970: row["expires_at"]), revoked: row["revoked"], used: row["used"])
            }
        }
    }

    public func consumeRefreshToken(hash: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE tokens SET used = 1 WHERE hash = ? AND kind = 'refresh' AND used = 0", arguments: [hash])
            return db.changesCount == 1
        }
    }

    public func revokeTokenFamily(_ family: String) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE tokens SET revoked = 1 WHERE family = ?", arguments: [family])
        }
    }
}
