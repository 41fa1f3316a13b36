import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird

/// `login`, `refresh`, `logout` (which needs the access token it ends) and `me` (who the token's user is). Mounted at
/// `v1/auth`.
struct AuthRoutes: RouteGroup {
    let storage: any ServerStorage
    let access: AccessControl
    let tokens: TokenService
    let hasher: PasswordHasher
    let loginThrottle: LoginThrottle
    let clock: any WallClock
    /// Checks identity provider tokens at `logout` and `me`; `nil` when the server has none.
    let identityProvider: JWTVerifier?

    func add(to routes: RouteCollection<CairnRequestContext>) {
        routes.post("login") { request, context in
            let login = try await request.decodeBody(LoginRequest.self, context: context, limit: 64 * 1024)
            let now = clock.now()
            let address = context.clientAddress ?? ""
            if let wait = try await loginThrottle.retryAfter(login.username, from: address, now: now) {
                let seconds = Int(wait.rounded(.up))
                throw ErrorBody(
                    code: .rateLimited, message: "Too many failed sign-ins for this user from here; retry in \(seconds) s",
                    details: ["retryAfter": .integer(Int64(seconds))])
            }
            guard let user = try await storage.user(named: login.username), try await hasher.verify(login.password, hash: user.passwordHash) else {
                try await loginThrottle.recordFailure(login.username, from: address, now: now)
                throw ErrorBody(code: .invalidCredentials, message: "Wrong username or password")
            }
            try await loginThrottle.recordSuccess(login.username, from: address)
            let pair = try await tokens.issue(user: user.name)
            return try await tokenResponse(user: user.name, pair.access, pair.refresh, pair.expiresIn)
        }
        routes.post("refresh") { request, context in
            let body = try await request.decodeBody(RefreshRequest.self, context: context, limit: 64 * 1024)
            let rotated = try await tokens.refresh(body.refreshToken)
            return try await tokenResponse(user: rotated.user, rotated.access, rotated.refresh, rotated.expiresIn)
        }
        let signedIn = routes.group().add(middleware: AuthenticationMiddleware(tokens: tokens, identityProvider: identityProvider))
        signedIn.post("logout") { _, context in
            // The access token identifies the sign-in; revoking its family kills the refresh tokens too. An
            // identity provider's JWT has nothing here to revoke: it stays valid until its `exp`.
            guard let identity = context.identity else { throw ErrorBody.unauthorized() }
            if let family = identity.family { try await storage.revokeTokenFamily(family) }
            return Response(status: .noContent)
        }
        signedIn.get("me") { _, context in
            guard let identity = context.identity else { throw ErrorBody.unauthorized() }
            let info = try await userInfo(identity)
            return try Response.json(info, headers: [.cacheControl: "no-store"])
        }
    }

    func tokenResponse(user: String, _ access: String, _ refresh: String, _ expiresIn: Int) async throws -> Response {
        let info = try await userInfo(.account(user))
        return try Response.json(
            TokenResponse(accessToken: access, refreshToken: refresh, expiresIn: expiresIn, user: info),
            headers: [.cacheControl: "no-store"])
    }

    /// Who `identity` is: its projects with their roles and whether it is a server operator, as ``AccessControl``
    /// decides.
    func userInfo(_ identity: SignedInUser) async throws -> UserInfo {
        UserInfo(
            name: identity.user, projects: try await access.memberships(of: identity), isOperator: try await access.isOperator(identity))
    }
}
