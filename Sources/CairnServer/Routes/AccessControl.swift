import CairnProtocol
import HTTPTypes
import Hummingbird

/// Who is calling, and what they may do in the project of the route.
struct ProjectAccess: Sendable {
    let user: String
    let project: String
    let role: Role
    /// The claims of the caller's identity-provider token; `nil` for Cairn's own tokens (the claims an operator set
    /// for the member apply then).
    var tokenClaims: [String: JSONValue]? = nil
}

/// The checks of project routes once ``AuthenticationMiddleware`` has signed the caller in: membership of the
/// route's `:project`, the role the route declares (see ``ProjectRoutes``), and the project's schema or collection.
struct AccessControl: Sendable {
    let storage: any ServerStorage

    /// Checks that the signed-in caller is a member of the route's project with at least `minimum`: non-members
    /// (and unknown projects) get `404 not_found`, members with a lesser role `403 forbidden`, and a request no one
    /// signed in `401 unauthorized`. The role comes from the identity provider's roles claim when the caller's JWT
    /// has one (a project it does not name: not a member), else from the members table.
    func caller(_ context: CairnRequestContext, minimum: Role, action: String? = nil) async throws -> ProjectAccess {
        guard let identity = context.identity else { throw ErrorBody.unauthorized() }
        let user = identity.user
        let project = context.parameters.get("project") ?? ""
        guard Names.isValidProjectName(project), let role = try await role(of: identity, in: project, needing: minimum) else {
            throw ErrorBody.notFound("project \"\(project)\"")
        }
        guard role >= minimum else {
            throw ErrorBody.forbidden("\(action ?? "This") needs the \(minimum.rawValue) role in \(project); you are \(role.rawValue)")
        }
        return ProjectAccess(user: user, project: project, role: role, tokenClaims: identity.tokenClaims)
    }

    /// The caller's role in `project`: from the JWT's roles claim when it has one (for a project that exists), else
    /// the members table; a server operator counts as `admin` of an existing project. Operators are looked up only
    /// when membership falls short of `minimum`, so a member's request costs one lookup.
    private func role(of identity: SignedInUser, in project: String, needing minimum: Role) async throws -> Role? {
        let member: Role?
        if let roles = identity.tokenRoles {
            member = try await storage.schema(project: project) != nil ? roles[project] : nil
        } else {
            member = try await storage.role(user: identity.user, project: project)
        }
        if let member, member >= minimum { return member }
        // Operators sign in with Cairn's own tokens: an identity provider's `sub` is another namespace.
        guard identity.family != nil, try await storage.isOperator(user: identity.user), try await storage.schema(project: project) != nil
        else { return member }
        return .admin
    }

    /// The project's schema, or `404 not_found`.
    func schema(_ access: ProjectAccess) async throws -> Schema {
        guard let schema = try await storage.schema(project: access.project) else { throw ErrorBody.notFound("project \"\(access.project)\"") }
        return schema
    }

    /// The user data rules are evaluated for: the caller, its role and its claims (read only when a rule needs them).
    func subject(_ access: ProjectAccess) async throws -> RuleSubject {
        let claims: [String: JSONValue]
        if let tokenClaims = access.tokenClaims {
            claims = tokenClaims
        } else {
            claims = try await storage.claims(user: access.user, project: access.project) ?? [:]
        }
        return RuleSubject(user: access.user, role: access.role, claims: claims)
    }

    /// What the caller may read and write in `collection` (``RecordScope``).
    func scope(_ access: ProjectAccess, _ collection: CollectionSchema) async throws -> RecordScope {
        guard access.role != .admin, collection.rules != nil else { return RecordScope(read: nil, write: nil) }
        return RecordScope(collection: collection, subject: try await subject(access))
    }

    /// The write rules binding the caller in `collections`; `nil` when none does.
    func writeGuard(_ access: ProjectAccess, schema: Schema, collections: Set<String>) async throws -> WriteGuard? {
        guard access.role != .admin else { return nil }
        let bound = schema.collections.filter { collections.contains($0.name) && $0.rules != nil }
        guard !bound.isEmpty else { return nil }
        let subject = try await subject(access)
        var filters: [String: Filter] = [:]
        var readFilters: [String: Filter] = [:]
        for collection in bound {
            let scope = RecordScope(collection: collection, subject: subject)
            if let write = scope.write { filters[collection.name] = write }
            if let read = scope.read { readFilters[collection.name] = read }
        }
        return filters.isEmpty ? nil : try WriteGuard(filters: filters, readFilters: readFilters, schema: schema)
    }

    /// The project's schema and the route's `:collection` within it, or `404 not_found`.
    func collection(_ access: ProjectAccess, _ context: CairnRequestContext) async throws -> (Schema, CollectionSchema) {
        let name = context.parameters.get("collection") ?? ""
        let schema = try await schema(access)
        guard let collection = schema.collection(named: name) else { throw ErrorBody.notFound("collection \"\(name)\"") }
        return (schema, collection)
    }
}
