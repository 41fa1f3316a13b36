import CairnProtocol
import Foundation

extension JSONCache {
    /// The cache's calls as `async` functions that never run on the caller's actor: parsing, SQL and the wait for the
    /// store's writer happen on a queue of their own, so a `@MainActor` caller stays free meanwhile.
    ///
    /// ```swift
    /// let products = try await client.openJSONCache(name: "products", fields: [.string("sku"), .number("price")])
    /// try await products.async.cache(jsonArray: responseBody)
    /// let cheap = try await products.async.entries(where: .condition("price", .lt, 10))
    /// ```
    ///
    /// Each call does what the synchronous call of the same name does, and throws the same errors.
    public var async: Async { Async(cache: self) }

    /// The asynchronous calls of a ``JSONCache``: see ``JSONCache/async``.
    public struct Async: Sendable {
        /// The cache the calls act on.
        public let cache: JSONCache

        /// ``JSONCache/cache(_:)``, off the caller's actor.
        @discardableResult
        public func cache(_ entries: [JSONValue]) async throws -> Int {
            try await off { try $0.cache(entries) }
        }

        /// ``JSONCache/cache(jsonArray:)``, off the caller's actor: the bytes are parsed there too.
        @discardableResult
        public func cache(jsonArray data: Data) async throws -> Int {
            try await off { try $0.cache(jsonArray: data) }
        }

        /// ``JSONCache/remove(ids:)``, off the caller's actor.
        public func remove(ids: [String]) async throws {
            try await off { try $0.remove(ids: ids) }
        }

        /// ``JSONCache/removeAll()``, off the caller's actor.
        public func removeAll() async throws {
            try await off { try $0.removeAll() }
        }

        /// ``JSONCache/reindex(fields:)``, off the caller's actor.
        public func reindex(fields: [CacheField]) async throws {
            try await off { try $0.reindex(fields: fields) }
        }

        /// ``JSONCache/entry(id:)``, off the caller's actor.
        public func entry(id: String) async throws -> [String: JSONValue]? {
            try await off { try $0.entry(id: id) }
        }

        /// ``JSONCache/entries(where:sortedBy:limit:offset:)``, off the caller's actor.
        public func entries(where filter: Filter? = nil, sortedBy sort: [Query.SortKey] = [], limit: Int? = nil, offset: Int? = nil)
            async throws -> [[String: JSONValue]]
        {
            try await off { try $0.entries(where: filter, sortedBy: sort, limit: limit, offset: offset) }
        }

        /// ``JSONCache/count(where:)``, off the caller's actor.
        public func count(where filter: Filter? = nil) async throws -> Int {
            try await off { try $0.count(where: filter) }
        }

        private func off<T: Sendable>(_ work: @escaping @Sendable (JSONCache) throws -> T) async throws -> T {
            let cache = self.cache
            return try await cache.queue.run { try work(cache) }
        }
    }
}

extension JSONCaches {
    /// ``init(location:scope:key:)`` off the caller's actor: opening (and decrypting) the store happens on a queue of
    /// its own.
    public static func open(location: StoreLocation, scope: String = "local", key: StoreKey? = nil) async throws -> JSONCaches {
        try await JSONCache.openingQueue.run { try JSONCaches(location: location, scope: scope, key: key) }
    }

    /// ``cache(name:fields:)`` off the caller's actor (it creates or rebuilds the cache's table).
    public func openCache(name: String, fields: [CacheField]) async throws -> JSONCache {
        try await JSONCache.openingQueue.run { try self.cache(name: name, fields: fields) }
    }
}

extension CairnClient {
    /// ``jsonCache(name:fields:)`` off the caller's actor (it creates or rebuilds the cache's table).
    ///
    /// ```swift
    /// let contacts = try await client.openJSONCache(name: "crm-contacts", fields: [.string("email")])
    /// try await contacts.async.cache(jsonArray: body)
    /// ```
    public func openJSONCache(name: String, fields: [CacheField]) async throws -> JSONCache {
        try await JSONCache.openingQueue.run { try self.jsonCache(name: name, fields: fields) }
    }
}

extension JSONCache {
    /// Where caches are opened by the `async` calls.
    static let openingQueue = BlockingQueue(label: "cairn.caches")
}
