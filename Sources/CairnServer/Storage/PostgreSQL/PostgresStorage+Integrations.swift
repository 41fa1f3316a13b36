import CairnProtocol
import Foundation
import PostgresNIO

extension PostgresStorage {
    /// Inserts the key for an existing project; a taken name (or hash) is `already_exists`.
    public func createServiceKey(_ key: StoredServiceKey) async throws {
        do {
            let rows = try await client.query(
                """
                INSERT INTO service_keys (project, name, role, key_hash, created_at)
                SELECT name, \(key.name), \(key.role.rawValue), \(key.keyHash), \(key.createdAt.epochSeconds) FROM projects
                WHERE name = \(key.project) RETURNING name
                """, logger: logger)
            guard try await rows.decode(String.self).first(where: { _ in true }) != nil else {
                throw ErrorBody.notFound("project \"\(key.project)\"")
            }
        } catch let error where Self.isUniqueViolation(error) {
            throw ErrorBody(code: .alreadyExists, message: "\(key.project) already has a service key named \"\(key.name)\"")
        }
    }

    /// Reads the key by its unique hash.
    public func serviceKey(hash: String) async throws -> StoredServiceKey? {
        try await serviceKeys(try await client.query("\(unescaped: Self.serviceKeySQL) WHERE key_hash = \(hash)", logger: logger)).first
    }

    /// Reads the project's keys by name.
    public func serviceKeys(project: String) async throws -> [StoredServiceKey] {
        try await serviceKeys(
            try await client.query("\(unescaped: Self.serviceKeySQL) WHERE project = \(project) ORDER BY name", logger: logger))
    }

    /// Deletes the key by its primary key.
    public func deleteServiceKey(project: String, name: String) async throws -> Bool {
        let rows = try await client.query(
            "DELETE FROM service_keys WHERE project = \(project) AND name = \(name) RETURNING name", logger: logger)
        return try await rows.decode(String.self).first(where: { _ in true }) != nil
    }

    /// Sets `last_used_at`.
    public func noteServiceKeyUsed(hash: String, now: Date) async throws {
        try await client.query("UPDATE service_keys SET last_used_at = \(now.epochSeconds) WHERE key_hash = \(hash)", logger: logger)
    }

    static let serviceKeySQL = "SELECT project, name, role, key_hash, created_at, last_used_at FROM service_keys"

    private func serviceKeys(_ rows: PostgresRowSequence) async throws -> [StoredServiceKey] {
        var keys: [StoredServiceKey] = []
        for try await (project, name, role, hash, created, used) in rows.decode((String, String, String, String, Double, Double?).self) {
            keys.append(StoredServiceKey(
                project: project, name: name, role: Role(rawValue: role) ?? .reader, keyHash: hash,
                createdAt: Date(timeIntervalSince1970: created), lastUsedAt: used.map(Date.init(timeIntervalSince1970:))))
        }
        return keys
    }
}

extension PostgresStorage {
    /// Inserts the webhook with the project's head version as its cursor, in one statement.
    public func createWebhook(_ webhook: StoredWebhook) async throws {
        do {
            let rows = try await client.query(
                """
                INSERT INTO webhooks (project, name, url, collections, secret, created_at, cursor, delivered, failures)
                SELECT name, \(webhook.name), \(webhook.url), \(StoredWebhook.collectionsText(webhook.collections)), \(webhook.secret),
                    \(webhook.createdAt.epochSeconds), head_version, 0, 0
                FROM projects WHERE name = \(webhook.project) RETURNING name
                """, logger: logger)
            guard try await rows.decode(String.self).first(where: { _ in true }) != nil else {
                throw ErrorBody.notFound("project \"\(webhook.project)\"")
            }
        } catch let error where Self.isUniqueViolation(error) {
            throw ErrorBody(code: .alreadyExists, message: "\(webhook.project) already has a webhook named \"\(webhook.name)\"")
        }
    }

    /// Reads the webhooks by project and name.
    public func webhooks(project: String?) async throws -> [StoredWebhook] {
        if let project {
            return try await webhooks(
                try await client.query("\(unescaped: Self.webhookSQL) WHERE project = \(project) ORDER BY name", logger: logger))
        }
        return try await webhooks(try await client.query("\(unescaped: Self.webhookSQL) ORDER BY project, name", logger: logger))
    }

    /// Deletes the webhook by its primary key.
    public func deleteWebhook(project: String, name: String) async throws -> Bool {
        let rows = try await client.query(
            "DELETE FROM webhooks WHERE project = \(project) AND name = \(name) RETURNING name", logger: logger)
        return try await rows.decode(String.self).first(where: { _ in true }) != nil
    }

    /// Takes the lease in one conditional update (row-locked, so two instances never both take it).
    public func leaseWebhook(project: String, name: String, owner: String, until: Date, now: Date) async throws -> StoredWebhook? {
        try await webhooks(
            try await client.query(
                """
                UPDATE webhooks SET lease_owner = \(owner), lease_until = \(until.epochSeconds)
                WHERE project = \(project) AND name = \(name)
                    AND (lease_owner IS NULL OR lease_owner = \(owner) OR lease_until < \(now.epochSeconds))
                RETURNING \(unescaped: Self.webhookColumns)
                """, logger: logger)
        ).first
    }

    /// Stores the attempt when `owner` still holds the lease.
    public func recordAttempt(project: String, name: String, owner: String, _ attempt: WebhookAttempt) async throws -> Bool {
        let rows: PostgresRowSequence
        switch attempt {
        case .delivered(let cursor, let count, let at):
            rows = try await client.query(
                """
                UPDATE webhooks SET cursor = GREATEST(cursor, \(cursor)), delivered = delivered + \(Int64(count)), failures = 0,
                    failing_since = NULL, last_error = NULL, last_attempt_at = \(at.epochSeconds), last_success_at = \(at.epochSeconds),
                    next_attempt_at = NULL
                WHERE project = \(project) AND name = \(name) AND lease_owner = \(owner) RETURNING name
                """, logger: logger)
        case .failed(let error, let at, let retryAt):
            rows = try await client.query(
                """
                UPDATE webhooks SET failures = failures + 1, failing_since = COALESCE(failing_since, \(at.epochSeconds)),
                    last_error = \(error), last_attempt_at = \(at.epochSeconds), next_attempt_at = \(retryAt.epochSeconds)
                WHERE project = \(project) AND name = \(name) AND lease_owner = \(owner) RETURNING name
                """, logger: logger)
        }
        return try await rows.decode(String.self).first(where: { _ in true }) != nil
    }

    /// Clears the lease when `owner` holds it.
    public func releaseWebhook(project: String, name: String, owner: String) async throws {
        try await client.query(
            """
            UPDATE webhooks SET lease_owner = NULL, lease_until = NULL
            WHERE project = \(project) AND name = \(name) AND lease_owner = \(owner)
            """, logger: logger)
    }

    static let webhookColumns = """
        project, name, url, collections, secret, created_at, cursor, delivered, failures, failing_since, last_error,
        last_attempt_at, last_success_at, next_attempt_at, lease_owner, lease_until
        """
    static let webhookSQL = "SELECT \(webhookColumns) FROM webhooks"

    private func webhooks(_ rows: PostgresRowSequence) async throws -> [StoredWebhook] {
        var webhooks: [StoredWebhook] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            func date(_ index: Int) throws -> Date? { try cells[index].decode(Double?.self).map(Date.init(timeIntervalSince1970:)) }
            var webhook = StoredWebhook(
                project: try cells[0].decode(String.self), name: try cells[1].decode(String.self), url: try cells[2].decode(String.self),
                collections: StoredWebhook.collections(fromText: try cells[3].decode(String.self)), secret: try cells[4].decode(String.self),
                createdAt: Date(timeIntervalSince1970: try cells[5].decode(Double.self)))
            webhook.cursor = try cells[6].decode(Int64.self)
            webhook.delivered = try cells[7].decode(Int64.self)
            webhook.failures = try cells[8].decode(Int64.self)
            webhook.failingSince = try date(9)
            webhook.lastError = try cells[10].decode(String?.self)
            webhook.lastAttemptAt = try date(11)
            webhook.lastSuccessAt = try date(12)
            webhook.nextAttemptAt = try date(13)
            webhook.leaseOwner = try cells[14].decode(String?.self)
            webhook.leaseUntil = try date(15)
            webhooks.append(webhook)
        }
        return webhooks
    }
}
