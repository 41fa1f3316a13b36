import CairnProtocol
import Hummingbird

extension AccessControl {
    /// Checks that the signed-in caller is a server operator, for the server-wide administration routes: others get
    /// `403 forbidden`, and a request no one signed in `401 unauthorized`. Returns the operator's name.
    @discardableResult
    func serverOperator(_ context: CairnRequestContext) async throws -> String {
        guard let identity = context.identity else { throw ErrorBody.unauthorized() }
        let user = identity.user
        // Operators sign in with Cairn's own tokens: an identity provider's `sub` is another namespace.
        guard identity.family != nil, try await storage.isOperator(user: user) else {
            throw ErrorBody.forbidden("The server's administration routes need a server operator; \(user) is not one")
        }
        return user
    }
}
