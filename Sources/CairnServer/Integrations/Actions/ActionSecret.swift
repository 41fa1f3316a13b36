import CairnProtocol
import Foundation

/// The secret a project's action calls are signed with (``DeliverySignature``): made by the server the first time
/// any instance needs it, kept in its storage, the same on every instance. `cairn admin action-secret` prints it for
/// the backends to check the `Cairn-Signature` header.
///
/// ```swift
/// let secret = try await ActionSecret.of(project: "field", in: storage)
/// DeliverySignature.isValid(header, for: body, secret: secret)
/// ```
enum ActionSecret {
    /// The secret of `project`'s actions.
    static func of(project: String, in storage: any ServerStorage) async throws -> String {
        try await storage.secret(named: "actions:\(project)") {
            var generator = SystemRandomNumberGenerator()
            return Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
    }
}

extension ServerAdmin {
    /// The secret `project`'s action calls are signed with (made now if no call made it yet); `not_found` for an
    /// unknown project.
    ///
    /// ```swift
    /// let secret = try await admin.actionSecret(project: "field")   // 64 hex digits
    /// ```
    public func actionSecret(project: String) async throws -> String {
        guard try await storage.schema(project: project) != nil else { throw ErrorBody.notFound("project \"\(project)\"") }
        return try await ActionSecret.of(project: project, in: storage)
    }
}
