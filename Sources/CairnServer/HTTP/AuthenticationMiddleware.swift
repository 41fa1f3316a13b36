import CairnProtocol
import Hummingbird

/// Requires `Authorization: Bearer <token>` on the routes of the group it is added to: a valid, unexpired,
/// unrevoked Cairn access token (`cat_...`), a stored service key (`cairn_sk_...`, ``ServiceKeySignIn``), or, when
/// the server has an identity provider, a JWT it signed (a token with two dots, checked by ``JWTVerifier``),
/// becomes the request's ``CairnRequestContext/identity``;
/// anything else is `401 unauthorized` before the route runs.
///
/// ```swift
/// let projects = router.group("v1/projects/:project").add(middleware: AuthenticationMiddleware(tokens: tokens, identityProvider: nil))
/// ```
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = CairnRequestContext
    let tokens: TokenService
    /// Checks identity provider tokens; `nil` when the server accepts Cairn's tokens only.
    let identityProvider: JWTVerifier?
    /// Checks service keys.
    var serviceKeys: ServiceKeySignIn {
        ServiceKeySignIn(storage: tokens.storage, clock: tokens.clock)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.identity = try await signIn(Self.bearerToken(request))
        return try await next(request, context)
    }

    /// Who `token` signs in: Cairn's tokens start with `cat_`, service keys with `cairn_sk_`, an identity provider's
    /// JWT has two dots.
    func signIn(_ token: String) async throws -> SignedInUser {
        if token.hasPrefix(ServiceKeySignIn.prefix) { return try await serviceKeys.signIn(token) }
        guard !token.hasPrefix("cat_"), token.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2 else {
            return SignedInUser(token: try await tokens.authenticate(accessToken: token))
        }
        guard let identityProvider else {
            throw ErrorBody.unauthorized("This server accepts no identity provider tokens (JWT): sign in with /v1/auth/login")
        }
        let user = try await identityProvider.verify(token)
        // `service:NAME` is the service keys' namespace: no token of a person may take a name in it.
        guard !user.user.hasPrefix(ServiceKeySignIn.userPrefix) else {
            throw ErrorBody.unauthorized("The identity provider's subject \(user.user) is in the service keys' namespace (service:)")
        }
        // An operator's revocation of the user's sign-ins ends the JWTs issued before it (without `iat`, all of them).
        if let revoked = try await tokens.storage.signInsRevokedAt(user: user.user), (user.issuedAt ?? .distantPast) <= revoked {
            throw ErrorBody.unauthorized("This user's sign-ins were revoked at \(RFC3339.string(from: revoked)): get a new token from the identity provider")
        }
        return user
    }

    /// The token of `Authorization: Bearer <accessToken>`, or `401 unauthorized`.
    static func bearerToken(_ request: Request) throws -> String {
        guard let header = request.headers[.authorization] else { throw ErrorBody.unauthorized() }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            throw ErrorBody.unauthorized("Authorization must be \"Bearer <accessToken>\"")
        }
        return String(parts[1])
    }
}
