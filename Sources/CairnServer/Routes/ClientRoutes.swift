import CairnProtocol
import Foundation
import Hummingbird

/// A project's clients: registration, removal (by the user who registered the client, or an admin), diagnostics
/// reports (uploaded by the client's user, read by admins), and what the server remembers of an uploaded operation
/// (admins), for support. Mounted at `v1/projects/:project`.
struct ClientRoutes: ProjectRouteGroup {
    let access: AccessControl
    let storage: any ServerStorage
    let admin: ServerAdmin
    let clock: any WallClock

    func add(to routes: ProjectRoutes) {
        routes.on(.post, "clients", requires: .reader) { request, context, caller in
            let body = try await request.decodeBody(ClientRegistrationRequest.self, context: context, limit: 16 * 1024)
            for (name, value) in [("device", body.device), ("app", body.app)] {
                if (value?.utf8.count ?? 0) > 200 { throw ErrorBody.validation("\(name) is at most 200 bytes", field: name) }
                if value?.utf8.contains(0) == true { throw ErrorBody.validation("\(name) cannot hold U+0000", field: name) }
            }
            let id = try await storage.registerClient(
                project: caller.project, user: caller.user, device: body.device, app: body.app, now: clock.now())
            return try Response.json(ClientRegistration(clientId: id), status: .created)
        }
        routes.on(.delete, "clients/:client", requires: .reader) { _, context, caller in
            let client = try await ownClient(context, caller, action: "Removing another user's client")
            try await admin.removeClient(project: caller.project, clientID: client.clientId)
            return Response(status: .noContent)
        }
        routes.on(.put, "clients/:client/diagnostics", requires: .reader) { request, context, caller in
            let client = try await ownClient(context, caller, action: "Uploading diagnostics for another user's client")
            // The limit is on the stored (compact) JSON; the body may be pretty-printed.
            let report = try await request.jsonBody(context: context, limit: 2 * ServerAdmin.maximumDiagnosticsBytes)
            return try Response.json(try await admin.storeDiagnostics(project: caller.project, clientID: client.clientId, report: report))
        }
        routes.on(.get, "clients/:client/diagnostics", requires: .admin, action: "Reading a client's diagnostics") { _, context, caller in
            try Response.json(try await admin.diagnostics(project: caller.project, clientID: context.parameters.get("client") ?? ""))
        }
        routes.on(.get, "operations/:opId", requires: .admin, action: "Reading an operation's history") { _, context, caller in
            let opId = context.parameters.get("opId") ?? ""
            guard let entry = try await storage.rememberedOperation(project: caller.project, opId: opId) else {
                throw ErrorBody(code: .notFound, message: "\(caller.project) remembers no operation \(opId) (kept at least 24 hours)")
            }
            return try Response.json(entry)
        }
    }

    /// The route's client, when the caller registered it or is an admin of the project: a client the project lacks
    /// is `404 not_found`, another user's client `403 forbidden` for anyone but an admin.
    private func ownClient(_ context: CairnRequestContext, _ caller: ProjectAccess, action: String) async throws -> ClientSummary {
        let client = try await admin.client(project: caller.project, clientID: context.parameters.get("client") ?? "")
        guard caller.role == .admin || client.user == caller.user else {
            throw ErrorBody.forbidden("\(action) needs the admin role in \(caller.project); you are \(caller.role.rawValue)")
        }
        return client
    }
}
