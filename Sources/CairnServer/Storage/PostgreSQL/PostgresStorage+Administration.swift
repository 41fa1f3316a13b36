import CairnProtocol
import Foundation
import PostgresNIO

extension PostgresStorage {
    /// Sets the user's `operator` flag; an unknown user is `not_found`.
    public func setOperator(user: String, _ isOperator: Bool) async throws {
        let rows = try await client.query(
            "UPDATE users SET operator = \(isOperator) WHERE name = \(user) RETURNING name", logger: logger)
        guard try await rows.decode(String.self).first(where: { _ in true }) != nil else {
            throw ErrorBody(code: .notFound, message: "user \"\(user)\" does not exist")
        }
    }

    /// The user's `operator` flag; an unknown user is not an operator.
    public func isOperator(user: String) async throws -> Bool {
        guard !Self.holdsNUL(user) else { return false }
        let rows = try await client.query("SELECT operator FROM users WHERE name = \(user)", logger: logger)
        for try await flag in rows.decode(Bool.self) { return flag }
        return false
    }

    /// A page of users joined with their memberships, in one statement.
    public func users(after: String?, limit: Int) async throws -> [UserSummary] {
        let rows = try await client.query(
            """
            SELECT u.name, u.operator, m.project, m.role
            FROM (SELECT name, operator FROM users WHERE name > \(after ?? "") ORDER BY name LIMIT \(max(0, limit))) u
            LEFT JOIN members m ON m."user" = u.name
            ORDER BY u.name, m.project
            """, logger: logger)
        var found: [(String, Bool, String?, String?)] = []
        for try await row in rows.decode((String, Bool, String?, String?).self) { found.append(row) }
        return UserSummary.grouped(found)
    }

    /// A page of projects with their member counts.
    public func projects(after: String?, limit: Int) async throws -> [ProjectSummary] {
        let rows = try await client.query(
            """
            SELECT p.name, p.created_at, p.head_version, (SELECT count(*) FROM members m WHERE m.project = p.name)
            FROM projects p WHERE p.name > \(after ?? "") ORDER BY p.name LIMIT \(max(0, limit))
            """, logger: logger)
        var projects: [ProjectSummary] = []
        for try await (name, created, head, members) in rows.decode((String, Double, Int64, Int64).self) {
            projects.append(ProjectSummary(name: name, createdAt: Date(timeIntervalSince1970: created), members: Int(members), headVersion: head))
        }
        return projects
    }

    /// A page of the project's members by user name.
    public func members(project: String, after: String?, limit: Int) async throws -> [ProjectMember] {
        let rows = try await client.query(
            """
            SELECT "user", role, claims FROM members WHERE project = \(project) AND "user" > \(after ?? "")
            ORDER BY "user" LIMIT \(max(0, limit))
            """, logger: logger)
        var members: [ProjectMember] = []
        for try await (user, role, claims) in rows.decode((String, String, String).self) {
            if let role = Role(rawValue: role) { members.append(ProjectMember(user: user, role: role, claims: try ClaimsColumn.decode(claims))) }
        }
        return members
    }

    /// A page of the project's clients (by the `clients_project` index) with the head version they lag.
    public func clients(project: String, behind: Int64, after: String?, limit: Int) async throws -> [ClientSummary] {
        try await Self.clientSummaries(
            try await client.query(
                """
                \(unescaped: Self.clientSummarySQL)
                WHERE c.project = \(project) AND c.id > \(after ?? "") AND p.head_version - c.last_pulled_version >= \(behind)
                ORDER BY c.id LIMIT \(max(0, limit))
                """, logger: logger))
    }

    /// The columns of a ``ClientSummary``, with the head version its client lags, before a `WHERE`.
    static let clientSummarySQL = """
        SELECT c.id, c."user", c.device, c.app, c.created_at, c.last_seen, c.last_pulled_version,
               p.head_version - c.last_pulled_version
        FROM clients c JOIN projects p ON p.name = c.project
        """

    /// The clients of rows of ``clientSummarySQL``.
    static func clientSummaries(_ rows: PostgresRowSequence) async throws -> [ClientSummary] {
        var clients: [ClientSummary] = []
        let types = (String, String, String?, String?, Double, Double, Int64, Int64).self
        for try await (id, user, device, app, created, seen, pulled, lag) in rows.decode(types) {
            clients.append(
                ClientSummary(
                    clientId: id, user: user, device: device, app: app, registeredAt: Date(timeIntervalSince1970: created),
                    lastSeenAt: Date(timeIntervalSince1970: seen), lastPulledVersion: pulled, behind: lag))
        }
        return clients
    }

    /// Deletes the membership row.
    public func revoke(user: String, project: String) async throws -> Bool {
        let rows = try await client.query(
            "DELETE FROM members WHERE project = \(project) AND \"user\" = \(user) RETURNING project", logger: logger)
        return try await rows.decode(String.self).first(where: { _ in true }) != nil
    }

    /// Revokes the user's tokens (by the `tokens_user` index) and upserts the time, in one transaction.
    public func revokeSignIns(user: String, now: Date) async throws {
        try await Self.transaction(client, logger: logger) { connection in
            try await connection.query("UPDATE tokens SET revoked = true WHERE \"user\" = \(user)", logger: logger)
            try await connection.query(
                """
                INSERT INTO sign_in_revocations ("user", revoked_at) VALUES (\(user), \(now.epochSeconds))
                ON CONFLICT ("user") DO UPDATE SET revoked_at = excluded.revoked_at
                """, logger: logger)
        }
    }

    /// When the user's sign-ins were last revoked.
    public func signInsRevokedAt(user: String) async throws -> Date? {
        guard !Self.holdsNUL(user) else { return nil }
        let rows = try await client.query("SELECT revoked_at FROM sign_in_revocations WHERE \"user\" = \(user)", logger: logger)
        for try await seconds in rows.decode(Double.self) { return Date(timeIntervalSince1970: seconds) }
        return nil
    }
}
