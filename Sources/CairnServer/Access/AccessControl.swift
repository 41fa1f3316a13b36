import CairnProtocol
import Hummingbird

/// The one owner of "who is this caller, and what may it do": the caller's role in a project now, whether data rules
/// bind it, and what it may read and change (records, files, notices). Every route, the notice filter, `view-as` and
/// `explain` ask it; nothing else derives a role.
///
/// ```swift
/// let caller = try await access.caller(context, minimum: .writer, action: "Pushing changes")
/// let scope = try await access.scope(caller, collection)   // what the rules let it read and write
/// ```
struct AccessControl: Sendable {
    let storage: any ServerStorage

    /// Checks that the signed-in caller is a member of the route's project with at least `minimum`: non-members
    /// (and unknown projects) get `404 not_found`, members with a lesser role `403 forbidden`, and a request no one
    /// signed in `401 unauthorized`.
    func caller(_ context: CairnRequestContext, minimum: Role, action: String? = nil) async throws -> ProjectAccess {
        guard let identity = context.identity else { throw ErrorBody.unauthorized() }
        let project = context.parameters.get("project") ?? ""
        guard Names.isValidProjectName(project), let access = try await current(identity, in: project) else {
            throw ErrorBody.notFound("project \"\(project)\"")
        }
        guard access.role >= minimum else {
            throw ErrorBody.forbidden(
                "\(action ?? "This") needs the \(minimum.rawValue) role in \(project); you are \(access.role.rawValue)")
        }
        return access
    }

    /// The access `identity` has in `project` now (``role(of:in:)``); `nil` when it is no member.
    func current(_ identity: SignedInUser, in project: String) async throws -> ProjectAccess? {
        try await role(of: identity, in: project).map { ProjectAccess(identity: identity, project: project, role: $0) }
    }

    /// The access a member signing in with Cairn's own password would have: for `view-as` and `explain`, which
    /// look at a project through another user's eyes. `nil` when `user` is no member.
    func member(_ user: String, in project: String) async throws -> ProjectAccess? {
        try await current(.account(user), in: project)
    }

    /// The caller's role in `project` now: a service key's stored role in its own project (none once revoked); from
    /// the identity provider's roles claim when its JWT has one (for a project that exists), else the members table;
    /// a server operator is `admin` of every existing project.
    /// `nil` for no member (and for a project that does not exist).
    func role(of identity: SignedInUser, in project: String) async throws -> Role? {
        if let key = identity.serviceKey {
            // Read again each time: a revoked key (or one replaced under the same name) has no role from then on.
            guard key.project == project, let stored = try await storage.serviceKey(hash: key.keyHash) else { return nil }
            return stored.role
        }
        let member: Role?
        if let roles = identity.tokenRoles {
            member = try await storage.schema(project: project) != nil ? roles[project] : nil
        } else {
            member = try await storage.role(user: identity.user, project: project)
        }
        if member == .admin { return member }
        guard try await isOperator(identity), try await storage.schema(project: project) != nil else { return member }
        return .admin
    }

    /// Whether `identity` is a server operator. Operators sign in with Cairn's own tokens: an identity provider's
    /// `sub` is another namespace, so a JWT never makes its bearer one, nor does a service key.
    func isOperator(_ identity: SignedInUser) async throws -> Bool {
        guard !identity.isIdentityProviderUser, identity.serviceKey == nil else { return false }
        return try await storage.isOperator(user: identity.user)
    }

    /// The projects `identity` belongs to, with its role in each: from the identity provider's roles claim when its
    /// JWT has one (projects that exist only), else the members table.
    func memberships(of identity: SignedInUser) async throws -> [ProjectMembership] {
        if let key = identity.serviceKey {
            return try await role(of: identity, in: key.project).map { [ProjectMembership(name: key.project, role: $0)] } ?? []
        }
        guard let roles = identity.tokenRoles else { return try await storage.memberships(user: identity.user) }
        var projects: [ProjectMembership] = []
        for (project, role) in roles.sorted(by: { $0.key < $1.key }) where try await storage.schema(project: project) != nil {
            projects.append(ProjectMembership(name: project, role: role))
        }
        return projects
    }
}
