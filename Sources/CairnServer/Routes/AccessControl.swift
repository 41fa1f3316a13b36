import CairnProtocol
import HTTPTypes
import Hummingbird

/// Who is calling, and what they may do in the project of the route.
struct ProjectAccess: Sendable {
    let user: String
    let project: String
    let role: Role
    /// The caller's claims, which rules read as `claims.NAME` (see ``AccessControl/claims(of:project:)``).
    let claims: [String: JSONValue]
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
        guard Names.isValidProjectName(project), let role = try await role(of: identity, project: project) else {
            throw ErrorBody.notFound("project \"\(project)\"")
        }
        guard role >= minimum else {
            throw ErrorBody.forbidden("\(action ?? "This") needs the \(minimum.rawValue) role in \(project); you are \(role.rawValue)")
        }
        return ProjectAccess(user: user, project: project, role: role, claims: try await claims(of: identity, project: project))
    }

    /// The caller's role in `project`: from the JWT's roles claim (for a project that exists), else the members table.
    func role(of identity: SignedInUser, project: String) async throws -> Role? {
        guard let roles = identity.tokenRoles else { return try await storage.role(user: identity.user, project: project) }
        guard let role = roles[project], try await storage.schema(project: project) != nil else { return nil }
        return role
    }

    /// The claims rules see for the caller: the JWT's own claims; a password user's are empty here.
    func claims(of identity: SignedInUser, project: String) async throws -> [String: JSONValue] {
        identity.tokenClaims ?? [:]
    }

    /// The project's schema, or `404 not_found`.
    func schema(_ access: ProjectAccess) async throws -> Schema {
        guard let schema = try await storage.schema(project: access.project) else { throw ErrorBody.notFound("project \"\(access.project)\"") }
        return schema
    }

    /// The project's schema and the route's `:collection` within it, or `404 not_found`.
    func collection(_ access: ProjectAccess, _ context: CairnRequestContext) async throws -> (Schema, CollectionSchema) {
        let name = context.parameters.get("collection") ?? ""
        let schema = try await schema(access)
        guard let collection = schema.collection(named: name) else { throw ErrorBody.notFound("collection \"\(name)\"") }
        return (schema, collection)
    }
}
