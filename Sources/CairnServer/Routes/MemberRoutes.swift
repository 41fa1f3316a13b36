import CairnProtocol
import Foundation
import Hummingbird

/// A project's members and clients, for its admins (and server operators): list, add or change, and remove
/// members, revoke a member's sign-ins, and list clients with how far behind they are. Mounted at
/// `v1/projects/:project`.
struct MemberRoutes: ProjectRouteGroup {
    let access: AccessControl
    let admin: ServerAdmin

    func add(to routes: ProjectRoutes) {
        routes.on(.get, "members", requires: .admin, action: "Listing members") { request, _, caller in
            let page = try PageRequest(request.formQuery)
            return try Response.json(try await admin.members(project: caller.project, after: page.after, limit: page.limit))
        }
        routes.on(.put, "members/:user", requires: .admin, action: "Changing members") { request, context, caller in
            let body = try await request.decodeBody(MemberRoleRequest.self, context: context, limit: 16 * 1024)
            let user = try Self.user(context)
            try await admin.grant(user: user, project: caller.project, role: body.role)
            let claims = try await admin.claims(user: user, project: caller.project)
            return try Response.json(ProjectMember(user: user, role: body.role, claims: claims))
        }
        routes.on(.delete, "members/:user", requires: .admin, action: "Removing members") { _, context, caller in
            try await admin.removeMember(user: try Self.user(context), project: caller.project)
            return Response(status: .noContent)
        }
        routes.on(.post, "members/:user/revoke-sign-ins", requires: .admin, action: "Revoking sign-ins") { _, context, caller in
            let user = try Self.user(context)
            guard try await admin.storage.role(user: user, project: caller.project) != nil else {
                throw ErrorBody(code: .notFound, message: "user \"\(user)\" is not a member of project \"\(caller.project)\"")
            }
            try await admin.revokeSignIns(user: user)
            return Response(status: .noContent)
        }
        routes.on(.get, "clients", requires: .admin, action: "Listing clients") { request, _, caller in
            let query = try request.formQuery
            let page = try PageRequest(query)
            let behind = try PageRequest.number(query, "behind") ?? 0
            return try Response.json(
                try await admin.clients(project: caller.project, behind: behind, after: page.after, limit: page.limit))
        }
    }

    /// The route's `:user`, a valid user name, or `404 not_found`.
    static func user(_ context: CairnRequestContext) throws -> String {
        let user = try AdminRoutes.user(context)
        guard Names.isValidID(user) else { throw ErrorBody(code: .notFound, message: "user \"\(user)\" does not exist") }
        return user
    }
}
