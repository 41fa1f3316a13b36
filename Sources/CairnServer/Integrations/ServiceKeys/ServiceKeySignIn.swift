import CairnProtocol
import Foundation

/// Signs another system in with a service key (`Authorization: Bearer cairn_sk_...`): the key's hash must be stored,
/// so a revoked key is refused at once on every instance. When it was last used is noted at most once a minute, so
/// a busy integration does not turn every read into a write.
struct ServiceKeySignIn: Sendable {
    let storage: any ServerStorage
    let clock: any WallClock

    /// The prefix of every service key.
    static let prefix = "cairn_sk_"
    /// The prefix of a service key's user name (`service:NAME`), reserved: no person's account or token takes it.
    static let userPrefix = "service:"

    /// A new key: the prefix and 32 random bytes.
    static func newKey() -> String { TokenService.randomToken(prefix: prefix) }

    /// Who `key` signs in, or `401 unauthorized`.
    func signIn(_ key: String) async throws -> SignedInUser {
        let hash = TokenService.hash(key)
        guard let stored = try await storage.serviceKey(hash: hash) else {
            throw ErrorBody.unauthorized("The service key is unknown or was revoked: ask an admin for a new one (cairn admin add-service-key)")
        }
        let now = clock.now()
        if stored.lastUsedAt.map({ now.timeIntervalSince($0) >= 60 }) ?? true {
            try await storage.noteServiceKeyUsed(hash: hash, now: now)
        }
        return SignedInUser(serviceKey: stored)
    }
}
