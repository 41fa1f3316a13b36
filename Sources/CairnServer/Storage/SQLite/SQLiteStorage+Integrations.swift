import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    /// Inserts the key; a taken name is `already_exists`, an unknown project `not_found`.
    public func createServiceKey(_ key: StoredServiceKey) async throws {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM projects WHERE name = ?", arguments: [key.project]) != nil else {
                throw ErrorBody.notFound("project \"\(key.project)\"")
            }
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM service_keys WHERE project = ? AND name = ?", arguments: [key.project, key.name]) == nil
            else { throw ErrorBody(code: .alreadyExists, message: "\(key.project) already has a service key named \"\(key.name)\"") }
            try db.execute(
                sql: "INSERT INTO service_keys (project, name, role, key_hash, created_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [key.project, key.name, key.role.rawValue, key.keyHash, key.createdAt.epochSeconds])
        }
    }

    /// Reads the key by its unique hash.
    public func serviceKey(hash: String) async throws -> StoredServiceKey? {
        try lookUp { db in
            try Row.fetchOne(db.cachedStatement(sql: Self.serviceKeySQL + " WHERE key_hash = ?"), arguments: [hash]).map(Self.serviceKey)
        }
    }

    /// Reads the project's keys by name.
    public func serviceKeys(project: String) async throws -> [StoredServiceKey] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: Self.serviceKeySQL + " WHERE project = ? ORDER BY name", arguments: [project]).map(Self.serviceKey)
        }
    }

    /// Deletes the key by its primary key.
    public func deleteServiceKey(project: String, name: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM service_keys WHERE project = ? AND name = ?", arguments: [project, name])
            return db.changesCount == 1
        }
    }

    /// Sets `last_used_at`.
    public func noteServiceKeyUsed(hash: String, now: Date) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE service_keys SET last_used_at = ? WHERE key_hash = ?", arguments: [now.epochSeconds, hash])
        }
    }

    static let serviceKeySQL = "SELECT project, name, role, key_hash, created_at, last_used_at FROM service_keys"

    static func serviceKey(_ row: Row) -> StoredServiceKey {
        StoredServiceKey(
            project: row[0], name: row[1], role: Role(rawValue: row[2]) ?? .reader, keyHash: row[3],
            createdAt: Date(timeIntervalSince1970: row[4]), lastUsedAt: (row[5] as Double?).map(Date.init(timeIntervalSince1970:)))
    }
}

extension SQLiteStorage {
    /// Inserts the webhook with the project's head version as its cursor, in one statement.
    public func createWebhook(_ webhook: StoredWebhook) async throws {
        try await write { db in
            guard let head = try Int64.fetchOne(db, sql: "SELECT head_version FROM projects WHERE name = ?", arguments: [webhook.project])
            else { throw ErrorBody.notFound("project \"\(webhook.project)\"") }
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM webhooks WHERE project = ? AND name = ?", arguments: [webhook.project, webhook.name]) == nil
            else { throw ErrorBody(code: .alreadyExists, message: "\(webhook.project) already has a webhook named \"\(webhook.name)\"") }
            try db.execute(
                sql: """
                    INSERT INTO webhooks (project, name, url, collections, secret, created_at, cursor, delivered, failures)
                    VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0)
                    """,
                arguments: [
                    webhook.project, webhook.name, webhook.url, StoredWebhook.collectionsText(webhook.collections), webhook.secret,
                    webhook.createdAt.epochSeconds, head,
                ])
        }
    }

    /// Reads the webhooks by project and name.
    public func webhooks(project: String?) async throws -> [StoredWebhook] {
        try await pool.read { db in
            if let project {
                return try Row.fetchAll(db, sql: Self.webhookSQL + " WHERE project = ? ORDER BY name", arguments: [project])
                    .map(Self.webhook)
            }
            return try Row.fetchAll(db, sql: Self.webhookSQL + " ORDER BY project, name").map(Self.webhook)
        }
    }

    /// Deletes the webhook by its primary key.
    public func deleteWebhook(project: String, name: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM webhooks WHERE project = ? AND name = ?", arguments: [project, name])
            return db.changesCount == 1
        }
    }

    /// Takes the lease in one conditional update.
    public func leaseWebhook(project: String, name: String, owner: String, until: Date, now: Date) async throws -> StoredWebhook? {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE webhooks SET lease_owner = ?, lease_until = ?
                    WHERE project = ? AND name = ? AND (lease_owner IS NULL OR lease_owner = ? OR lease_until < ?)
                    """,
                arguments: [owner, until.epochSeconds, project, name, owner, now.epochSeconds])
            guard db.changesCount == 1 else { return nil }
            return try Row.fetchOne(db, sql: Self.webhookSQL + " WHERE project = ? AND name = ?", arguments: [project, name])
                .map(Self.webhook)
        }
    }

    /// Stores the attempt when `owner` still holds the lease.
    public func recordAttempt(project: String, name: String, owner: String, _ attempt: WebhookAttempt) async throws -> Bool {
        try await write { db in
            switch attempt {
            case .delivered(let cursor, let count, let at):
                try db.execute(
                    sql: """
                        UPDATE webhooks SET cursor = max(cursor, ?), delivered = delivered + ?, failures = 0, failing_since = NULL,
                            last_error = NULL, last_attempt_at = ?, last_success_at = ?, next_attempt_at = NULL
                        WHERE project = ? AND name = ? AND lease_owner = ?
                        """,
                    arguments: [cursor, count, at.epochSeconds, at.epochSeconds, project, name, owner])
            case .failed(let error, let at, let retryAt):
                try db.execute(
                    sql: """
                        UPDATE webhooks SET failures = failures + 1, failing_since = coalesce(failing_since, ?), last_error = ?,
                            last_attempt_at = ?, next_attempt_at = ?
                        WHERE project = ? AND name = ? AND lease_owner = ?
                        """,
                    arguments: [at.epochSeconds, error, at.epochSeconds, retryAt.epochSeconds, project, name, owner])
            }
            return db.changesCount == 1
        }
    }

    /// Clears the lease when `owner` holds it.
    public func releaseWebhook(project: String, name: String, owner: String) async throws {
        try await write { db in
            try db.execute(
                sql: "UPDATE webhooks SET lease_owner = NULL, lease_until = NULL WHERE project = ? AND name = ? AND lease_owner = ?",
                arguments: [project, name, owner])
        }
    }

    static let webhookSQL = """
        SELECT project, name, url, collections, secret, created_at, cursor, delivered, failures, failing_since, last_error,
            last_attempt_at, last_success_at, next_attempt_at, lease_owner, lease_until FROM webhooks
        """

    static func webhook(_ row: Row) -> StoredWebhook {
        var webhook = StoredWebhook(
            project: row[0], name: row[1], url: row[2], collections: StoredWebhook.collections(fromText: row[3]), secret: row[4],
            createdAt: Date(timeIntervalSince1970: row[5]))
        webhook.cursor = row[6]
        webhook.delivered = row[7]
        webhook.failures = row[8]
        webhook.failingSince = (row[9] as Double?).map(Date.init(timeIntervalSince1970:))
        webhook.lastError = row[10]
        webhook.lastAttemptAt = (row[11] as Double?).map(Date.init(timeIntervalSince1970:))
        webhook.lastSuccessAt = (row[12] as Double?).map(Date.init(timeIntervalSince1970:))
        webhook.nextAttemptAt = (row[13] as Double?).map(Date.init(timeIntervalSince1970:))
        webhook.leaseOwner = row[14]
        webhook.leaseUntil = (row[15] as Double?).map(Date.init(timeIntervalSince1970:))
        return webhook
    }
}
