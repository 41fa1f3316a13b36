import CairnProtocol
import Foundation

/// Who is on the server, for `cairn admin` and the administration routes: operators, users, projects, members and
/// clients in pages, members removed and sign-ins revoked.
///
/// ```swift
/// let stuck = try await admin.clients(project: "field", behind: 1000)   // devices 1000 versions or more behind
/// try await admin.revokeSignIns(user: "alice")
/// ```
extension ServerAdmin {
    /// The page size when a list does not ask for one.
    public static let defaultPageSize = 100
    /// The largest page a list answers.
    public static let maximumPageSize = 1000

    /// Creates a user with a password, who is a server operator when `isOperator`.
    public func addUser(_ name: String, password: String, isOperator: Bool) async throws {
        try await addUser(name, password: password)
        if isOperator { try await setOperator(name, true) }
    }

    /// Makes a user a server operator, admin of every project and of the server-wide routes, or takes it away;
    /// `not_found` for an unknown user.
    public func setOperator(_ name: String, _ isOperator: Bool) async throws {
        try await storage.setOperator(user: name, isOperator)
    }

    /// A page of the server's users by name, each with their projects and roles.
    public func users(after: String? = nil, limit: Int = defaultPageSize) async throws -> AdminPage<UserSummary> {
        try Self.checkPage(after: after, limit: limit)
        return AdminPage(fetched: try await storage.users(after: after, limit: limit + 1), limit: limit, key: \.name)
    }

    /// A page of the server's projects by name, with member counts and head versions.
    public func projects(after: String? = nil, limit: Int = defaultPageSize) async throws -> AdminPage<ProjectSummary> {
        try Self.checkPage(after: after, limit: limit)
        return AdminPage(fetched: try await storage.projects(after: after, limit: limit + 1), limit: limit, key: \.name)
    }

    /// A page of a project's members by user name; `not_found` for an unknown project.
    public func members(project: String, after: String? = nil, limit: Int = defaultPageSize) async throws -> AdminPage<ProjectMember> {
        try Self.checkPage(after: after, limit: limit)
        try await checkProject(project)
        return AdminPage(fetched: try await storage.members(project: project, after: after, limit: limit + 1), limit: limit, key: \.user)
    }

    /// A page of a project's clients by id, only those at least `behind` versions behind its head version (0: all);
    /// `not_found` for an unknown project.
    public func clients(
        project: String, behind: Int64 = 0, after: String? = nil, limit: Int = defaultPageSize
    ) async throws -> AdminPage<ClientSummary> {
        try Self.checkPage(after: after, limit: limit)
        guard behind >= 0 else { throw ErrorBody.validation("behind may not be negative", field: "behind") }
        try await checkProject(project)
        let fetched = try await storage.clients(project: project, behind: behind, after: after, limit: limit + 1)
        return AdminPage(fetched: fetched, limit: limit, key: \.clientId)
    }

    /// Takes a user's role in a project away; `not_found` for an unknown project or a user who is not a member.
    public func removeMember(user: String, project: String) async throws {
        try await checkProject(project)
        guard try await storage.revoke(user: user, project: project) else {
            throw ErrorBody(code: .notFound, message: "user \"\(user)\" is not a member of project \"\(project)\"")
        }
    }

    /// Ends every sign-in of `user`: their Cairn tokens stop working at once, and identity-provider tokens issued
    /// before now are refused. `user` need not have an account here (an identity provider's user).
    public func revokeSignIns(user: String) async throws {
        guard !user.isEmpty, user.utf8.count <= 1024, !user.utf8.contains(0) else {
            throw ErrorBody.validation("a user name needs 1 to 1024 bytes, without U+0000", field: "user")
        }
        try await storage.revokeSignIns(user: user, now: clock.now())
    }

    /// `not_found` unless the project exists.
    func checkProject(_ project: String) async throws {
        guard Names.isValidProjectName(project), try await storage.schema(project: project) != nil else {
            throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
        }
    }

    /// `validation_failed` for a page size outside 1 to ``maximumPageSize`` or an `after` holding U+0000.
    static func checkPage(after: String?, limit: Int) throws {
        guard (1...maximumPageSize).contains(limit) else {
            throw ErrorBody.validation("limit must be 1 to \(maximumPageSize)", field: "limit")
        }
        if after?.utf8.contains(0) == true { throw ErrorBody.validation("after cannot hold U+0000", field: "after") }
    }
}

extension AdminPage {
    /// The first `limit` of `fetched` (read with `limit + 1`), with ``next`` the key of the last one kept when more
    /// were found.
    init(fetched: [Item], limit: Int, key: (Item) -> String) {
        let items = Array(fetched.prefix(limit))
        self.init(items: items, next: fetched.count > limit ? items.last.map(key) : nil)
    }
}
