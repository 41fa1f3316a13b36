import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird

/// `POST /v1/projects/{project}/actions/{action}`: a member calls an action of the project's schema, and the
/// server forwards it to the action's backend (``ActionService``). Non-members get `404`, an unknown action `404`, a
/// role below the action's `403`. Mounted at `v1/projects/:project`.
struct ActionRoutes: ProjectRouteGroup {
    let access: AccessControl
    let actions: ActionService

    func add(to routes: ProjectRoutes) {
        routes.on(.post, "actions/:action", requires: .reader, action: "Calling actions") { request, context, caller in
            let name = context.parameters.get("action") ?? ""
            guard let action = try await access.schema(caller).action(named: name) else { throw ErrorBody.notFound("action \"\(name)\"") }
            try access.checkMayCall(action, caller)
            let body = try await request.decodeBody(ActionCallRequest.self, context: context, limit: 1 << 20)
            return try Response.json(try await actions.call(action, body, caller: caller))
        }
    }
}
