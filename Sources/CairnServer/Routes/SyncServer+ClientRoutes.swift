import CairnProtocol
import Foundation
import Hummingbird

extension SyncServer {
    func addClientRoutes(to project: RouterGroup<CairnRequestContext>) {
        project.post("clients") { request, context in
            let access = try await self.access(request, context, minimum: .reader)
            let body = try await request.decodeBody(ClientRegistrationRequest.self, context: context, limit: 16 * 1024)
            for (name, value) in [("device", body.device), ("app", body.app)] where (value?.utf8.count ?? 0) > 200 {
                throw APIError.validation("\(name) is at most 200 bytes", field: name)
            }
            let id = try await self.storage.registerClient(
                project: access.project, user: access.user, device: body.device, app: body.app, now: self.clock.now())
            return try Response.json(ClientRegistration(clientId: id), status: .created)
        }
    }
}
