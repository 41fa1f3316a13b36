import CairnProtocol
import Foundation
import Hummingbird

/// The server-wide administration routes, for server operators only: users, projects, revoking a user's sign-ins,
/// and the backups made. Mounted at `v1/admin` behind ``AuthenticationMiddleware``.
struct AdminRoutes: RouteGroup {
    let access: AccessControl
    let admin: ServerAdmin

    func add(to routes: RouteCollection<CairnRequestContext>) {
        routes.get("users") { request, context in
            try await access.serverOperator(context)
            let page = try PageRequest(request.formQuery)
            return try Response.json(try await admin.users(after: page.after, limit: page.limit))
        }
        routes.get("projects") { request, context in
            try await access.serverOperator(context)
            let page = try PageRequest(request.formQuery)
            return try Response.json(try await admin.projects(after: page.after, limit: page.limit))
        }
        routes.get("backups") { _, context in
            try await access.serverOperator(context)
            return try Response.json(BackupList(backups: try await admin.backups()))
        }
        routes.post("users/:user/revoke-sign-ins") { _, context in
            try await access.serverOperator(context)
            try await admin.revokeSignIns(user: try Self.user(context))
            return Response(status: .noContent)
        }
    }

    /// The route's `:user`, percent-decoded (an identity provider's user name may hold any character); a malformed
    /// escape is `400 bad_request`.
    static func user(_ context: CairnRequestContext) throws -> String {
        guard let user = (context.parameters.get("user") ?? "").removingPercentEncoding else {
            throw ErrorBody.badRequest("The path has a malformed % escape")
        }
        return user
    }
}

/// The paging of an administration list, from `?after=KEY&limit=N`: items after `KEY` (from the first without it),
/// at most `N` (``ServerAdmin/defaultPageSize`` without it).
struct PageRequest: Sendable {
    /// The key the page starts after.
    let after: String?
    /// The most items it holds.
    let limit: Int

    /// Reads `after` and `limit`; a `limit` that is not a whole number is `422 validation_failed` (its range is
    /// ``ServerAdmin``'s to check).
    init(_ query: FormQuery) throws {
        after = query.get("after")
        limit = try Self.number(query, "limit").map(Int.init) ?? ServerAdmin.defaultPageSize
    }

    /// The whole number `name` holds, if given; anything else is `422 validation_failed`.
    static func number(_ query: FormQuery, _ name: String) throws -> Int64? {
        guard let text = query.get(name) else { return nil }
        guard let value = Int64(text) else {
            throw ErrorBody.validation("\(name) must be a whole number", field: name)
        }
        return value
    }
}
