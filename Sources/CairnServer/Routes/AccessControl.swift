import CairnProtocol
import HTTPTypes
import Hummingbird

/// Who is calling, and what they may do in the project of the route.
struct ProjectAccess: Sendable {
    let user: String
    let project: String
    let role: Role
}

/// The checks every project route starts with: a valid access token, membership of the route's `:project`, the
/// role the route needs, and the project's schema or collection.
struct AccessControl: Sendable {
    let tokens: TokenService
    let storage: any ServerStorage

    /// The token of `Authorization: Bearer <accessToken>`, or `401 unauthorized`.
    static func bearerToken(_ request: Request) throws -> String {
        guard let header = request.headers[.authorization] else { throw APIError.unauthorized() }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            throw APIError.unauthorized("Authorization must be \"Bearer <accessToken>\"")
        }
        return String(parts[1])
    }

    /// The stored access token of the request: valid, unexpired and not revoked, or `401 unauthorized`.
    func signedIn(_ request: Request) async throws -> StoredToken {
        try await tokens.authenticate(accessToken: Self.bearerToken(request))
    }

    /// Checks that the caller is a member of the route's project with at least `minimum`: non-members (and
    /// unknown projects) get `404 not_found`, members with a lesser role `403 forbidden`.
    func access(_ request: Request, _ context: CairnRequestContext, minimum: Role, action: String? = nil) async throws -> ProjectAccess {
        let user = try await signedIn(request).user
        let project = context.parameters.get("project") ?? ""
        guard Names.isValidProjectName(project), let role = try await storage.role(user: user, project: project) else {
            throw APIError.notFound("project \"\(project)\"")
        }
        guard role >= minimum else {
            throw APIError.forbidden("\(action ?? "This") needs the \(minimum.rawValue) role in \(project); you are \(role.rawValue)")
        }
        return ProjectAccess(user: user, project: project, role: role)
    }

    /// The project's schema, or `404 not_found`.
    func schema(_ access: ProjectAccess) async throws -> Schema {
        guard let schema = try await storage.schema(project: access.project) else { throw APIError.notFound("project \"\(access.project)\"") }
        return schema
    }

    /// The project's schema and the route's `:collection` within it, or `404 not_found`.
    func collection(_ access: ProjectAccess, _ context: CairnRequestContext) async throws -> (Schema, CollectionSchema) {
        let name = context.parameters.get("collection") ?? ""
        let schema = try await schema(access)
        guard let collection = schema.collection(named: name) else { throw APIError.notFound("collection \"\(name)\"") }
        return (schema, collection)
    }
}
