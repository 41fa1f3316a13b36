import CairnProtocol
import Foundation

/// What the server keeps for other systems: service keys (only their hashes) and webhooks with their outbox state.
/// The rules on top (who may sign in, what is delivered when, backoff, leases) live in `Integrations/`; a backend
/// implements these primitives only.
public protocol IntegrationStorage: Sendable {
    // MARK: Service keys

    /// Stores a new service key; `already_exists` when `project` has a key of that name, `not_found` for an unknown
    /// project.
    func createServiceKey(_ key: StoredServiceKey) async throws
    /// The key whose hash is `hash`.
    func serviceKey(hash: String) async throws -> StoredServiceKey?
    /// Every key of `project`, by name.
    func serviceKeys(project: String) async throws -> [StoredServiceKey]
    /// Deletes the key `name` of `project`; false when there was none.
    func deleteServiceKey(project: String, name: String) async throws -> Bool
    /// Notes that the key with this hash signed a request at `now`.
    func noteServiceKeyUsed(hash: String, now: Date) async throws

    // MARK: Webhooks

    /// Stores a new webhook whose cursor is the project's head version now (it delivers what is committed after);
    /// `already_exists` when `project` has one of that name, `not_found` for an unknown project.
    func createWebhook(_ webhook: StoredWebhook) async throws
    /// Every webhook of `project` (of every project when `nil`), by project and name.
    func webhooks(project: String?) async throws -> [StoredWebhook]
    /// Deletes the webhook `name` of `project`; false when there was none.
    func deleteWebhook(project: String, name: String) async throws -> Bool
    /// Takes (or renews) the delivery lease of a webhook for `owner` until `until`, when no other owner holds an
    /// unexpired one at `now`; the webhook as stored, or `nil` when another instance holds it (or it is gone).
    func leaseWebhook(project: String, name: String, owner: String, until: Date, now: Date) async throws -> StoredWebhook?
    /// Stores the outcome of a delivery attempt made under `owner`'s lease; false (storing nothing) when the lease
    /// was lost meanwhile.
    func recordAttempt(project: String, name: String, owner: String, _ attempt: WebhookAttempt) async throws -> Bool
    /// Gives up `owner`'s lease of the webhook, if it still holds it.
    func releaseWebhook(project: String, name: String, owner: String) async throws
}

/// A key another system signs in with, as stored: its hash, never the key.
public struct StoredServiceKey: Sendable, Hashable, Codable {
    /// The project the key belongs to.
    public var project: String
    /// Its name, unique in the project (writes carry `updatedBy` = `service:NAME`).
    public var name: String
    /// The role it acts with.
    public var role: Role
    /// The SHA-256 of the key's text, as lowercase hex.
    public var keyHash: String
    /// When it was made.
    public var createdAt: Date
    /// When it last signed a request in (to the minute), if ever.
    public var lastUsedAt: Date?

    /// A key with these values.
    public init(project: String, name: String, role: Role, keyHash: String, createdAt: Date, lastUsedAt: Date? = nil) {
        self.project = project
        self.name = name
        self.role = role
        self.keyHash = keyHash
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A webhook as stored: where it delivers, what, and its outbox's state.
public struct StoredWebhook: Sendable, Hashable {
    /// The project whose changes it delivers.
    public var project: String
    /// Its name, unique in the project.
    public var name: String
    /// Where deliveries are posted.
    public var url: String
    /// The collections it delivers; empty: every collection.
    public var collections: [String]
    /// The key of its `Cairn-Signature`.
    public var secret: String
    /// When it was added.
    public var createdAt: Date
    /// The feed version through which every change was delivered (the outbox's cursor).
    public var cursor: Int64 = 0
    /// How many changes were delivered.
    public var delivered: Int64 = 0
    /// Failed attempts since the last success.
    public var failures: Int64 = 0
    /// When the current run of failures began; `nil` while deliveries succeed.
    public var failingSince: Date?
    /// Why the last attempt failed.
    public var lastError: String?
    /// When a delivery was last attempted, and last accepted.
    public var lastAttemptAt: Date?
    /// When a delivery was last accepted.
    public var lastSuccessAt: Date?
    /// When the next attempt may be made (backoff); `nil`: now.
    public var nextAttemptAt: Date?
    /// The instance holding the delivery lease, and until when.
    public var leaseOwner: String?
    /// Until when ``leaseOwner`` holds the lease.
    public var leaseUntil: Date?

    /// A new webhook (its cursor is set when stored).
    public init(project: String, name: String, url: String, collections: [String], secret: String, createdAt: Date) {
        self.project = project
        self.name = name
        self.url = url
        self.collections = collections
        self.secret = secret
        self.createdAt = createdAt
    }
}

/// The outcome of one delivery attempt (``IntegrationStorage/recordAttempt(project:name:owner:_:)``).
public enum WebhookAttempt: Sendable, Hashable {
    /// The receiver accepted `count` changes (possibly none: the cursor only moves) through `cursor`.
    case delivered(cursor: Int64, count: Int, at: Date)
    /// The attempt failed with `error`; the next one waits until `retryAt`.
    case failed(error: String, at: Date, retryAt: Date)
}

extension StoredWebhook {
    /// The collections as stored: a JSON array of names.
    static func collectionsText(_ collections: [String]) -> String {
        JSONValue.array(collections.map(JSONValue.string)).jsonText()
    }

    /// The collections from their stored text (none when it is not an array of names).
    static func collections(fromText text: String) -> [String] {
        guard case .array(let items)? = try? JSONValue(parsing: text) else { return [] }
        return items.compactMap { if case .string(let name) = $0 { name } else { nil } }
    }
}
