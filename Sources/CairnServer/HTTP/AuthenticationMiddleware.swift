import CairnProtocol
import Hummingbird

/// Requires `Authorization: Bearer <accessToken>` on the routes of the group it is added to: a valid, unexpired,
/// unrevoked access token becomes the request's ``CairnRequestContext/identity``; anything else is
/// `401 unauthorized` before the route runs.
///
/// ```swift
/// let projects = router.group("v1/projects/:project").add(middleware: AuthenticationMiddleware(tokens: tokens))
/// ```
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = CairnRequestContext
    let tokens: TokenService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.identity = try await tokens.authenticate(accessToken: Self.bearerToken(request))
        return try await next(request, context)
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
