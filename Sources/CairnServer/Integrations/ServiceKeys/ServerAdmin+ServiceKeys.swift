import CairnProtocol
import Foundation

/// A project's service keys, for `cairn admin` and the service-key routes: made (the key is shown once), listed,
/// revoked. Only a key's SHA-256 is stored, so a copy of the database holds no usable key.
///
/// ```swift
/// let made = try await admin.addServiceKey(name: "erp", project: "field", role: .writer)
/// print(made.key)   // cairn_sk_...
/// try await admin.revokeServiceKey(name: "erp", project: "field")
/// ```
extension ServerAdmin {
    /// Makes a key named `name` acting as `role` in `project`; `already_exists` when the name is taken,
    /// `validation_failed` for a bad name, `not_found` for an unknown project.
    public func addServiceKey(name: String, project: String, role: Role) async throws -> NewServiceKey {
        try Self.checkIntegrationName(name, of: "service key")
        try await checkProject(project)
        let key = ServiceKeySignIn.newKey()
        let createdAt = clock.now()
        try await storage.createServiceKey(StoredServiceKey(
            project: project, name: name, role: role, keyHash: TokenService.hash(key), createdAt: createdAt))
        return NewServiceKey(name: name, role: role, key: key, createdAt: createdAt)
    }

    /// The keys of `project`, by name; `not_found` for an unknown project.
    public func serviceKeys(project: String) async throws -> [ServiceKeySummary] {
        try await checkProject(project)
        return try await storage.serviceKeys(project: project).map {
            ServiceKeySummary(name: $0.name, role: $0.role, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt)
        }
    }

    /// Revokes the key `name` of `project`: every instance refuses it from the next request on, open event streams
    /// included. `not_found` when there is no such key.
    public func revokeServiceKey(name: String, project: String) async throws {
        try await checkProject(project)
        guard try await storage.deleteServiceKey(project: project, name: name) else {
            throw ErrorBody(code: .notFound, message: "\(project) has no service key named \"\(name)\"")
        }
    }

    /// Checks a service key's or webhook's name: `^[a-z][a-z0-9_]{0,62}$`.
    static func checkIntegrationName(_ name: String, of kind: String) throws {
        guard Names.isValidProjectName(name) else {
            throw ErrorBody.validation("\(kind) name \"\(name)\" must match ^[a-z][a-z0-9_]{0,62}$", field: "name")
        }
    }
}
