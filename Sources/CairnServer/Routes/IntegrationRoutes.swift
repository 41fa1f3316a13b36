import CairnProtocol
import Foundation
import Hummingbird

/// A project's ways in and out for other systems, for its admins (and server operators): service keys (made, listed,
/// revoked) and webhooks (added, listed with their outbox's state, removed). Mounted at `v1/projects/:project`.
struct IntegrationRoutes: ProjectRouteGroup {
    let access: AccessControl
    let admin: ServerAdmin

    func add(to routes: ProjectRoutes) {
        routes.on(.get, "service-keys", requires: .admin, action: "Listing service keys") { _, _, caller in
            try Response.json(ServiceKeyList(serviceKeys: try await admin.serviceKeys(project: caller.project)))
        }
        routes.on(.post, "service-keys", requires: .admin, action: "Making service keys") { request, context, caller in
            try Self.person(caller, "make service keys")
            let body = try await request.decodeBody(NewServiceKeyRequest.self, context: context, limit: 16 * 1024)
            return try Response.json(
                try await admin.addServiceKey(name: body.name, project: caller.project, role: body.role), status: .created)
        }
        routes.on(.delete, "service-keys/:name", requires: .admin, action: "Revoking service keys") { _, context, caller in
            try await admin.revokeServiceKey(name: context.parameters.get("name") ?? "", project: caller.project)
            return Response(status: .noContent)
        }
        routes.on(.get, "webhooks", requires: .admin, action: "Listing webhooks") { _, _, caller in
            try Response.json(WebhookList(webhooks: try await admin.webhooks(project: caller.project)))
        }
        routes.on(.post, "webhooks", requires: .admin, action: "Adding webhooks") { request, context, caller in
            try Self.person(caller, "add webhooks")
            let body = try await request.decodeBody(NewWebhookRequest.self, context: context, limit: 64 * 1024)
            return try Response.json(try await admin.addWebhook(body, project: caller.project), status: .created)
        }
        routes.on(.delete, "webhooks/:name", requires: .admin, action: "Removing webhooks") { _, context, caller in
            try await admin.removeWebhook(name: context.parameters.get("name") ?? "", project: caller.project)
            return Response(status: .noContent)
        }
    }

    /// Refuses a service key: what it made (a key, a webhook sending data out) would outlive its own revocation.
    static func person(_ caller: ProjectAccess, _ action: String) throws {
        guard caller.identity.serviceKey == nil else {
            throw ErrorBody.forbidden("A service key may not \(action): ask a project admin")
        }
    }
}
