import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    /// Sets the user's `operator` flag; no row changed is `not_found`.
    public func setOperator(user: String, _ isOperator: Bool) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE users SET operator = ? WHERE name = ?", arguments: [isOperator, user])
            guard db.changesCount == 1 else { throw ErrorBody(code: .notFound, message: "user \"\(user)\" does not exist") }
        }
    }

    /// Reads the flag from a WAL snapshot; an unknown user is not an operator.
    public func isOperator(user: String) async throws -> Bool {
        try lookUp { db in
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT operator FROM users WHERE name = ?"), arguments: [user]) ?? false
        }
    }

    /// Reads a page of users joined with their memberships, in one snapshot.
    public func users(after: String?, limit: Int) async throws -> [UserSummary] {
        try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT u.name, u.operator, m.project, m.role
                    FROM (SELECT name, operator FROM users WHERE name > ? ORDER BY name LIMIT ?) u
                    LEFT JOIN members m ON m.user = u.name
                    ORDER BY u.name, m.project
                    """,
                arguments: [after ?? "", max(0, limit)])
            return UserSummary.grouped(rows.map { ($0["name"], $0["operator"], $0["project"], $0["role"]) })
        }
    }

    /// Reads a page of projects with their member counts.
    public func projects(after: String?, limit: Int) async throws -> [ProjectSummary] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT p.name, p.created_at, p.head_version, (SELECT count(*) FROM members m WHERE m.project = p.name) AS members
                    FROM projects p WHERE p.name > ? ORDER BY p.name LIMIT ?
                    """,
                arguments: [after ?? "", max(0, limit)]
            ).map { row in
                ProjectSummary(
                    name: row["name"], createdAt: Date(timeIntervalSince1970: row["created_at"]), members: row["members"],
                    headVersion: row["head_version"])
            }
        }
    }

    /// Reads a page of the project's members by user name.
    public func members(project: String, after: String?, limit: Int) async throws -> [ProjectMember] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT user, role, claims FROM members WHERE project = ? AND user > ? ORDER BY user LIMIT ?",
                arguments: [project, after ?? "", max(0, limit)]
            ).compactMap { row in
                try Role(rawValue: row["role"]).map { ProjectMember(user: row["user"], role: $0, claims: try ClaimsColumn.decode(row["claims"])) }
            }
        }
    }

    /// Reads a page of the project's clients (by the `clients_project` index) with the head version they lag.
    public func clients(project: String, behind: Int64, after: String?, limit: Int) async throws -> [ClientSummary] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: Self.clientSummarySQL
                    + " WHERE c.project = ? AND c.id > ? AND p.head_version - c.last_pulled_version >= ? ORDER BY c.id LIMIT ?",
                arguments: [project, after ?? "", behind, max(0, limit)]
            ).map(Self.clientSummary)
        }
    }

    /// The columns of a ``ClientSummary``, with the head version its client lags, before a `WHERE`.
    static let clientSummarySQL = """
        SELECT c.id, c.user, c.device, c.app, c.created_at, c.last_seen, c.last_pulled_version,
               p.head_version - c.last_pulled_version AS behind
        FROM clients c JOIN projects p ON p.name = c.project
        """

    /// A row of ``clientSummarySQL``.
    static func clientSummary(_ row: Row) -> ClientSummary {
        ClientSummary(
            clientId: row["id"], user: row["user"], device: row["device"], app: row["app"],
            registeredAt: Date(timeIntervalSince1970: row["created_at"]), lastSeenAt: Date(timeIntervalSince1970: row["last_seen"]),
            lastPulledVersion: row["last_pulled_version"], behind: row["behind"])
    }

    /// Deletes the membership row.
    public func revoke(user: String, project: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM members WHERE project = ? AND user = ?", arguments: [project, user])
            return db.changesCount == 1
        }
    }

    /// Revokes the user's tokens (by the `tokens_user` index) and upserts the time, in one transaction.
    public func revokeSignIns(user: String, now: Date) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE tokens SET revoked = 1 WHERE user = ?", arguments: [user])
            try db.execute(
                sql: """
                    INSERT INTO sign_in_revocations (user, revoked_at) VALUES (?, ?)
                    ON CONFLICT (user) DO UPDATE SET revoked_at = excluded.revoked_at
                    """,
                arguments: [user, now.epochSeconds])
        }
    }

    /// Reads the time from a WAL snapshot.
    public func signInsRevokedAt(user: String) async throws -> Date? {
        try await pool.read { db in
            try Double.fetchOne(db, sql: "SELECT revoked_at FROM sign_in_revocations WHERE user = ?", arguments: [user])
                .map(Date.init(timeIntervalSince1970:))
        }
    }
}
