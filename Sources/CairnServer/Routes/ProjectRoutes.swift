import CairnProtocol
import HTTPTypes
import Hummingbird

/// The routes of one project, mounted at `v1/projects/:project` behind ``AuthenticationMiddleware``: each route
/// declares the least role it needs, and its handler runs only for a member who has it, with the caller in hand.
///
/// ```swift
/// routes.on(.post, "batch", requires: .writer, action: "Pushing changes") { request, context, caller in
///     ...   // caller.user, caller.project
/// }
/// ```
struct ProjectRoutes {
    /// A route's handler: the request, its context and the member calling.
    typealias Handler = @Sendable (Request, CairnRequestContext, ProjectAccess) async throws -> Response

    let routes: RouteCollection<CairnRequestContext>
    let access: AccessControl

    /// Adds a route that answers members with at least `role`; `action` names what a lesser role was refused
    /// ("Pushing changes needs the writer role in field; you are reader").
    func on(_ method: HTTPRequest.Method, _ path: RouterPath, requires role: Role, action: String? = nil, use handler: @escaping Handler) {
        let access = self.access
        routes.on(path, method: method) { request, context in
            try await handler(request, context, access.caller(context, minimum: role, action: action))
        }
    }
}

/// A group of one project's routes carrying its own dependencies, mounted at `v1/projects/:project` behind
/// ``AuthenticationMiddleware``.
///
/// ```swift
/// projects.addRoutes(SchemaRoutes(access: access, admin: admin).collection)
/// ```
protocol ProjectRouteGroup: Sendable {
    /// The membership, role and schema checks its routes use.
    var access: AccessControl { get }
    /// Adds the group's routes, each with the role it needs.
    func add(to routes: ProjectRoutes)
}

extension ProjectRouteGroup {
    /// The group's routes, ready to mount.
    var collection: RouteCollection<CairnRequestContext> {
        let routes = RouteCollection(context: CairnRequestContext.self)
        add(to: ProjectRoutes(routes: routes, access: access))
        return routes
    }
}
