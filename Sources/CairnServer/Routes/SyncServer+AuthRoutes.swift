import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird

extension SyncServer {
    func addAuthRoutes(to group: RouterGroup<CairnRequestContext>) {
        group.post("login") { request, context in
            let login = try await request.decodeBody(LoginRequest.self, context: context, limit: 64 * 1024)
            let now = self.clock.now()
            if let wait = await self.loginGate.retryAfter(login.username, now: now) {
                throw APIError(
                    .tooManyRequests, .rateLimited, "Too many failed sign-ins for this user; retry in \(Int(wait.rounded(.up))) s",
                    details: ["retryAfter": .integer(Int64(wait.rounded(.up)))], headers: [.retryAfter: String(Int(wait.rounded(.up)))])
            }
            guard let user = try await self.storage.user(named: login.username),
                self.hasher.verify(login.password, hash: user.passwordHash)
            else {
                await self.loginGate.failed(login.username, now: now)
                throw APIError(.unauthorized, .invalidCredentials, "Wrong username or password")
            }
            await self.loginGate.succeeded(login.username)
            let pair = try await self.tokens.issue(user: user.name)
            return try await self.tokenResponse(user: user.name, pair.access, pair.refresh, pair.expiresIn)
        }
        group.post("refresh") { request, context in
            let body = try await request.decodeBody(RefreshRequest.self, context: context, limit: 64 * 1024)
            let rotated = try await self.tokens.refresh(body.refreshToken)
            return try await self.tokenResponse(user: rotated.user, rotated.access, rotated.refresh, rotated.expiresIn)
        }
        group.post("logout") { request, context in
            // The access token identifies the sign-in; revoking its family kills the refresh tokens too.
            guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
                throw APIError.unauthorized()
            }
            let accessToken = String(header.dropFirst(7))
            _ = try await self.tokens.authenticate(accessToken: accessToken)
            try await self.tokens.revoke(tokenMatching: accessToken)
            return Response(status: .noContent)
        }
    }

    func tokenResponse(user: String, _ access: String, _ refresh: String, _ expiresIn: Int) async throws -> Response {
        let projects = try await storage.memberships(user: user)
        return try Response.json(
            TokenResponse(accessToken: access, refreshToken: refresh, expiresIn: expiresIn, user: UserInfo(name: user, projects: projects)),
            headers: [.cacheControl: "no-store"])
    }
}
