import CairnProtocol
import Hummingbird

extension AccessControl {
    /// Checks that the signed-in caller is a server operator, for the server-wide administration routes: others get
    /// `403 forbidden`, and a request no one signed in `401 unauthorized`. Returns the operator's name.
    @discardableResult
    func serverOperator(_ context: CairnRequestContext) async throws -> String {
        guard let identity = context.identity else { throw ErrorBody.unauthorized() }
        guard try await isOperator(identity) else {
            throw ErrorBody.forbidden("The server's administration routes need a server operator; \(identity.user) is not one")
        }
        return identity.user
    }
}
