import CairnProtocol
import Foundation

/// A project's webhooks, for `cairn admin` and the webhook routes: added (delivering what is committed from then on),
/// listed with their outbox's state, removed.
///
/// ```swift
/// try await admin.addWebhook(
///     NewWebhookRequest(name: "erp", url: "https://erp.example/cairn", collections: ["jobs"], secret: secret), project: "field")
/// let status = try await admin.webhooks(project: "field")
/// ```
extension ServerAdmin {
    /// The shortest secret a webhook takes, in bytes.
    public static let minimumWebhookSecretBytes = 16

    /// Adds a webhook to `project`: it delivers every change committed from now on to its collections (all when
    /// none are named). `validation_failed` for a bad name, URL, collection name or a short secret,
    /// `already_exists` when the name is taken, `not_found` for an unknown project.
    @discardableResult
    public func addWebhook(_ request: NewWebhookRequest, project: String) async throws -> WebhookSummary {
        try Self.checkIntegrationName(request.name, of: "webhook")
        guard let url = URL(string: request.url), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
            throw ErrorBody.validation("the webhook's url must be an absolute http or https URL", field: "url")
        }
        let collections = request.collections ?? []
        for collection in collections where !Names.isValidCollectionName(collection) {
            throw ErrorBody.validation("\"\(collection)\" is not a collection name", field: "collections")
        }
        guard request.secret.utf8.count >= Self.minimumWebhookSecretBytes, request.secret.utf8.count <= 1024 else {
            throw ErrorBody.validation("the webhook's secret must be \(Self.minimumWebhookSecretBytes) to 1024 bytes", field: "secret")
        }
        try await checkProject(project)
        try await storage.createWebhook(StoredWebhook(
            project: project, name: request.name, url: request.url, collections: Array(Set(collections)).sorted(), secret: request.secret,
            createdAt: clock.now()))
        guard let added = try await webhooks(project: project).first(where: { $0.name == request.name }) else {
            throw ErrorBody(code: .notFound, message: "\(project) has no webhook named \"\(request.name)\"")
        }
        return added
    }

    /// The webhooks of `project`, by name, with their outbox's state; `not_found` for an unknown project.
    public func webhooks(project: String) async throws -> [WebhookSummary] {
        try await checkProject(project)
        var head: Int64 = 0
        if let schema = try await storage.schema(project: project) { head = try await storage.headVersion(project: project, schema: schema) }
        let now = clock.now()
        return try await storage.webhooks(project: project).map { webhook in
            WebhookSummary(
                name: webhook.name, url: webhook.url, collections: webhook.collections, createdAt: webhook.createdAt,
                status: webhookSettings.status(of: webhook, now: now), cursor: webhook.cursor,
                behind: max(0, head - webhook.cursor), delivered: webhook.delivered, failures: webhook.failures,
                failingSince: webhook.failingSince, lastError: webhook.lastError, lastAttemptAt: webhook.lastAttemptAt,
                lastSuccessAt: webhook.lastSuccessAt, nextAttemptAt: webhook.failures > 0 ? webhook.nextAttemptAt : nil)
        }
    }

    /// Removes the webhook `name` of `project`: no delivery starts after this (one in flight may still arrive).
    /// `not_found` when there is no such webhook.
    public func removeWebhook(name: String, project: String) async throws {
        try await checkProject(project)
        guard try await storage.deleteWebhook(project: project, name: name) else {
            throw ErrorBody(code: .notFound, message: "\(project) has no webhook named \"\(name)\"")
        }
    }
}
