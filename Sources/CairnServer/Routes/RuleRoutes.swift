import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird

/// The project admin's view of data rules: a member's claims (read and set) and `explain`. Mounted at
/// `v1/projects/:project`.
struct RuleRoutes: ProjectRouteGroup {
    let access: AccessControl
    let admin: ServerAdmin

    func add(to routes: ProjectRoutes) {
        routes.on(.get, "members/:user/claims", requires: .admin, action: "Reading claims") { _, context, caller in
            let claims = try await admin.claims(user: try MemberRoutes.user(context), project: caller.project)
            return try Response.json(JSONValue.object(claims))
        }
        routes.on(.put, "members/:user/claims", requires: .admin, action: "Setting claims") { request, context, caller in
            let body = try await request.decodeBody(JSONValue.self, context: context, limit: 64 * 1024)
            guard case .object(let claims) = body else { throw ErrorBody.validation("claims are a JSON object", field: "claims") }
            try await admin.setClaims(user: try MemberRoutes.user(context), project: caller.project, claims)
            return try Response.json(JSONValue.object(claims))
        }
        routes.on(.get, "explain", requires: .admin, action: "Explaining rules") { request, _, caller in
            let query = try request.formQuery
            func required(_ name: String) throws -> String {
                guard let value = query.get(name), !value.isEmpty else { throw ErrorBody.validation("\(name) is required", field: name) }
                return value
            }
            var claims: [String: JSONValue]?
            if let text = query.get("claims") {
                guard case .object(let object)? = try? JSONValue(parsing: Array(text.utf8)) else {
                    throw ErrorBody.validation("claims is a JSON object", field: "claims")
                }
                claims = object
            }
            var role: Role?
            if let text = query.get("role") {
                guard let parsed = Role(rawValue: text) else { throw ErrorBody.validation("role is reader, writer or admin", field: "role") }
                role = parsed
            }
            let explanation = try await admin.explain(
                project: caller.project, user: try required("user"), collection: try required("collection"), id: try required("id"),
                role: role, claims: claims)
            return try Response.json(explanation)
        }
    }
}
