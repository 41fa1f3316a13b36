import Foundation

/// A service key as listed (`GET /v1/projects/{project}/service-keys`, `cairn admin list-service-keys`): never the
/// key itself, which is shown once, when it is made.
public struct ServiceKeySummary: Codable, Sendable, Hashable {
    /// Its name, unique in the project; its writes carry `updatedBy` = `service:NAME`.
    public var name: String
    /// The role it acts with.
    public var role: Role
    /// When it was made.
    public var createdAt: Date
    /// When it last signed a request in (to the minute); `nil` if never.
    public var lastUsedAt: Date?

    /// A summary with these values.
    public init(name: String, role: Role, createdAt: Date, lastUsedAt: Date?) {
        self.name = name
        self.role = role
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A new service key (`POST /v1/projects/{project}/service-keys`): the only time its text is shown.
public struct NewServiceKey: Codable, Sendable, Hashable {
    /// Its name.
    public var name: String
    /// The role it acts with.
    public var role: Role
    /// The key, `cairn_sk_...`: sent as `Authorization: Bearer KEY`. Only its hash is kept.
    public var key: String
    /// When it was made.
    public var createdAt: Date

    /// A new key with these values.
    public init(name: String, role: Role, key: String, createdAt: Date) {
        self.name = name
        self.role = role
        self.key = key
        self.createdAt = createdAt
    }
}

/// The body of `POST /v1/projects/{project}/service-keys`.
public struct NewServiceKeyRequest: Codable, Sendable, Hashable {
    /// The key's name: `^[a-z][a-z0-9_]{0,62}$`.
    public var name: String
    /// The role it acts with.
    public var role: Role

    /// A request for a key named `name` acting as `role`.
    public init(name: String, role: Role) {
        self.name = name
        self.role = role
    }
}

/// The body of `POST /v1/projects/{project}/webhooks`.
public struct NewWebhookRequest: Codable, Sendable, Hashable {
    /// The webhook's name: `^[a-z][a-z0-9_]{0,62}$`.
    public var name: String
    /// Where deliveries are posted: an absolute `http` or `https` URL.
    public var url: String
    /// The collections whose changes it delivers; empty or absent: every collection.
    public var collections: [String]?
    /// The key of its `Cairn-Signature` (at least 16 bytes).
    public var secret: String

    /// A request for a webhook with these values.
    public init(name: String, url: String, collections: [String]? = nil, secret: String) {
        self.name = name
        self.url = url
        self.collections = collections
        self.secret = secret
    }
}

/// A webhook as listed (`GET /v1/projects/{project}/webhooks`, `cairn admin list-webhooks` and `webhook-status`):
/// where it delivers and how its outbox stands. Its secret is never shown.
public struct WebhookSummary: Codable, Sendable, Hashable {
    /// Its name.
    public var name: String
    /// Where deliveries are posted.
    public var url: String
    /// The collections it delivers; empty: every collection.
    public var collections: [String]
    /// When it was added.
    public var createdAt: Date
    /// `ok` (delivering, or nothing to deliver), `retrying` (failed since ``failingSince``, less than a day) or
    /// `failing` (failed for a day or more; it keeps its place and goes on retrying).
    public var status: String
    /// The feed version through which every change was delivered.
    public var cursor: Int64
    /// How many versions of the project's feed it is behind (changes of collections it does not deliver count too).
    public var behind: Int64
    /// How many changes it delivered.
    public var delivered: Int64
    /// Failed attempts since the last success.
    public var failures: Int64
    /// When the current run of failures began.
    public var failingSince: Date?
    /// Why the last attempt failed.
    public var lastError: String?
    /// When a delivery was last attempted.
    public var lastAttemptAt: Date?
    /// When a delivery was last accepted.
    public var lastSuccessAt: Date?
    /// When the next attempt is due, while retrying.
    public var nextAttemptAt: Date?

    /// A summary with these values.
    public init(
        name: String, url: String, collections: [String], createdAt: Date, status: String, cursor: Int64, behind: Int64,
        delivered: Int64, failures: Int64, failingSince: Date? = nil, lastError: String? = nil, lastAttemptAt: Date? = nil,
        lastSuccessAt: Date? = nil, nextAttemptAt: Date? = nil
    ) {
        self.name = name
        self.url = url
        self.collections = collections
        self.createdAt = createdAt
        self.status = status
        self.cursor = cursor
        self.behind = behind
        self.delivered = delivered
        self.failures = failures
        self.failingSince = failingSince
        self.lastError = lastError
        self.lastAttemptAt = lastAttemptAt
        self.lastSuccessAt = lastSuccessAt
        self.nextAttemptAt = nextAttemptAt
    }
}

/// One change in a webhook delivery's `deliveries`.
public struct WebhookDelivery: Codable, Sendable, Hashable {
    /// Unique per change and webhook (`WEBHOOK:VERSION`): a receiver that sees one twice (deliveries are at least
    /// once) skips it.
    public var deliveryId: String
    /// The change's collection.
    public var collection: String
    /// The record's id.
    public var id: String
    /// The project-wide version of the change.
    public var version: Int64
    /// `upsert` or `delete`.
    public var op: String
    /// The record's data (`nil` for a delete).
    public var data: JSONValue?
    /// Who committed it: a user, `service:NAME` for a service key.
    public var updatedBy: String
    /// When it was committed.
    public var committedAt: String

    /// A change with these values.
    public init(
        deliveryId: String, collection: String, id: String, version: Int64, op: String, data: JSONValue?, updatedBy: String,
        committedAt: String
    ) {
        self.deliveryId = deliveryId
        self.collection = collection
        self.id = id
        self.version = version
        self.op = op
        self.data = data
        self.updatedBy = updatedBy
        self.committedAt = committedAt
    }
}

/// The body of a webhook delivery: `POST URL` with `Cairn-Delivery` and `Cairn-Signature` headers.
public struct WebhookDeliveryBody: Codable, Sendable, Hashable {
    /// The project.
    public var project: String
    /// The webhook's name.
    public var webhook: String
    /// Up to 100 changes, in feed order.
    public var deliveries: [WebhookDelivery]

    /// A body with these values.
    public init(project: String, webhook: String, deliveries: [WebhookDelivery]) {
        self.project = project
        self.webhook = webhook
        self.deliveries = deliveries
    }
}

/// The answer of `GET /v1/projects/{project}/service-keys`.
public struct ServiceKeyList: Codable, Sendable, Hashable {
    /// The project's keys, by name.
    public var serviceKeys: [ServiceKeySummary]

    /// A list of these keys.
    public init(serviceKeys: [ServiceKeySummary]) { self.serviceKeys = serviceKeys }
}

/// The answer of `GET /v1/projects/{project}/webhooks`.
public struct WebhookList: Codable, Sendable, Hashable {
    /// The project's webhooks, by name.
    public var webhooks: [WebhookSummary]

    /// A list of these webhooks.
    public init(webhooks: [WebhookSummary]) { self.webhooks = webhooks }
}
