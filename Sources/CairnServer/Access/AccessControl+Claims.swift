import CairnProtocol

extension AccessControl {
    /// The caller's claims: its identity provider token's own, else those an operator set for the member (`{}` when
    /// none). What data rules read as `claims.NAME`, and what an action's backend receives as `caller.claims`.
    func claims(of access: ProjectAccess) async throws -> [String: JSONValue] {
        if let tokenClaims = access.identity.tokenClaims { return tokenClaims }
        return try await storage.claims(user: access.user, project: access.project) ?? [:]
    }
}
