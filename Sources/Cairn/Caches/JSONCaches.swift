import CairnProtocol
import Foundation
import GRDB

/// Named JSON caches without a server: a store file (or memory) that holds ``JSONCache``s under one scope.
///
/// ```swift
/// let caches = try JSONCaches(location: .file(cachePath))
/// let rates = try caches.cache(name: "rates", fields: [.string("currency"), .datetime("asOf")])
/// try rates.cache([["id": "EUR", "currency": "EUR", "rate": 1.08, "asOf": "2026-11-23T08:00:00Z"]])
/// ```
///
/// A client keeps its own caches in its store with ``CairnClient/jsonCache(name:fields:)``.
public final class JSONCaches: Sendable {
    /// The scope of the caches it opens.
    public let scope: String
    let writer: any DatabaseWriter

    /// Opens (or creates) the store at `location`, encrypted under `key` when one is given; its caches belong to
    /// `scope` (default `local`).
    public init(location: StoreLocation, scope: String = "local", key: StoreKey? = nil) throws {
        do {
            writer = try LocalStore.open(location, configuration: StoreConfiguration(key: key)).writer
        } catch {
            throw CairnError.store(error)
        }
        self.scope = scope
    }

    /// Opens or creates the cache `name` with these searchable fields (rebuilding them if they changed).
    public func cache(name: String, fields: [CacheField]) throws -> JSONCache {
        try JSONCache(writer: writer, scope: scope, name: name, fields: fields)
    }
}

extension CairnClient {
    /// Opens or creates a named JSON cache in the client's store, scoped to its server and project, with these
    /// searchable fields (rebuilt from the cached entries if they changed since the last open).
    ///
    /// ```swift
    /// let contacts = try client.jsonCache(name: "crm-contacts", fields: [.string("email"), .datetime("lastSeen")])
    /// ```
    public func jsonCache(name: String, fields: [CacheField]) throws -> JSONCache {
        try checkOpen()
        return try JSONCache(writer: store.writer, scope: "\(configuration.serverURL.absoluteString)#\(configuration.project)", name: name, fields: fields)
    }
}
