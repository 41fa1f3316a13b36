import CairnProtocol
import HTTPTypes
import Hummingbird

/// Who is calling, and what they may do in the project of the route.
struct ProjectAccess: Sendable {
    let user: String
    let project: String
    let role: Role
}

/// The checks of project routes once ``AuthenticationMiddleware`` has signed the caller in: membership of the
/// route's `:project`, the role the route declares (see ``ProjectRoutes``), and the project's schema or collection.
struct AccessControl: Sendable {
    let storage: any ServerStorage

    /// Checks that the signed-in caller is a member of the route's project with at least `minimum`: non-members
    /// (and unknown projects) get `404 not_found`, members with a lesser role `403 forbidden`, and a request no one
    /// signed in `401 unauthorized`.
    func caller(_ context: CairnRequestContext, minimum: Role, action: String? = nil) async throws -> ProjectAccess {
        guard let user = context.identity?.user else { throw ErrorBody.unauthorized() }
        let project = context.parameters.get("project") ?? ""
        guard Names.isValidProjectName(project), let role = try await role(of: user, in: project, needing: minimum) else {
            throw ErrorBody.notFound("project \"\(project)\"")
        }
        guard role >= minimum else {
            throw ErrorBody.forbidden("\(action ?? "This") needs the \(minimum.rawValue) role in \(project); you are \(role.rawValue)")
        }
        return ProjectAccess(user: user, project: project, role: role)
    }

    /// The user's role in `project`; a server operator counts as its `admin` (of an existing project). Operators are
    /// looked up only when membership falls short of `minimum`, so a member's request costs one lookup.
    private func role(of user: String, in project: String, needing minimum: Role) async throws -> Role? {
        let member = try await storage.role(user: user, project: project)
        if let member, member >= minimum { return member }
        guard try await storage.isOperator(user: user), try await storage.schema(project: project) != nil else { return member }
        return .admin
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
