import CairnProtocol
import Foundation
import Hummingbird

/// `POST .../clients`: client registration. Mounted at `v1/projects/:project`.
struct ClientRoutes: ProjectRouteGroup {
    let access: AccessControl
    let storage: any ServerStorage
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
    }
}
