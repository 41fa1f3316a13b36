import CairnProtocol
import Foundation
import GRDB

extension CairnClient {
    /// Reads one record from the server now (an online read), and updates the local copy with it unless the record
    /// has local changes waiting for upload (they keep showing; only the server state they build on moves on).
    ///
    /// ```swift
    /// let fresh = try await client.fetchFromServer("stock", id: "sku-118")   // the server's state, or nil
    /// ```
    ///
    /// - Returns: the server's state of the record, or `nil` when the server has no such record (a local copy without
    ///   local changes is then removed).
    /// - Throws: `network_unavailable` and the other transport errors when the server cannot answer; the local copy
    ///   is then left as it was.
    public func fetchFromServer(_ collection: String, id: String) async throws -> LocalRecord? {
        try checkOpen()
        guard !store.localCollections.contains(collection) else {
            throw CairnError.invalid("\(collection) is local-only: it has no server copy")
        }
        _ = try store.table(collection)
        let body = try await api.changes(collection: collection, since: nil, limit: 1, filter: .condition("id", .eq, .string(id))).body
        let change = try await store.offPool { store in
            let change = try store.scan(body, collection: collection).changes.first { $0.id == id && !$0.removed }
            try store.applyFetched(change, collection: collection, id: id)
            return change
        }
        return change.map { change in
            VisibleRow(
                id: id, data: change.dataText.flatMap(decodeObject) ?? [:], version: change.version, pending: false,
                updatedAt: change.updatedAt, updatedBy: change.updatedBy
            ).record
        }
    }
}

extension CairnClient {
    /// Runs a query on the server's current records now (an online query), without storing them: the same filter,
    /// sort, limit and offset as a local ``Query``, with the same answers on the same data.
    ///
    /// ```swift
    /// let low = try await client.fetchFromServer(Query("stock").filter(.condition("count", .lt, 5)).sorted(by: "count").limit(20))
    /// ```
    ///
    /// The server selects the records with the query's filter (and the caller's data rules) from its changes feed,
    /// page by page; the client sorts and cuts them as the local store would, so a query costs the records its filter
    /// matches, not the whole collection. The local store, its queue and its cursors are left alone.
    ///
    /// - Throws: `invalid_argument` for a local-only collection or a query with full-text search (which runs on the
    ///   device's index only); `network_unavailable` and the other transport errors when the server cannot answer.
    public func fetchFromServer(_ query: Query) async throws -> [LocalRecord] {
        try checkOpen()
        guard !store.localCollections.contains(query.collection) else {
            throw CairnError.invalid("\(query.collection) is local-only: it has no server copy")
        }
        guard query.search == nil else {
            throw CairnError.invalid("Full-text search runs on the device's index only: query the server with a filter")
        }
        let collection = try store.collection(query.collection)
        // A scratch store of the collection alone: the server's pages go in as a pull writes them, and the local
        // query runs on them, so sorting and limits are exactly the local store's.
        let scratch: LocalStore
        do {
            scratch = try LocalStore(writer: DatabaseQueue(), configuration: StoreConfiguration())
            _ = try scratch.apply(schema: Schema(collections: [collection]), etag: nil)
        } catch {
            throw CairnError.store(error)
        }
        var since: String?
        while true {
            try Task.checkCancellation()
            let body = try await api.changes(collection: collection.name, since: since, limit: configuration.pageSize, filter: query.filter).body
            let page = try await scratch.offPool { scratch in
                let page = try scratch.scan(body, collection: collection.name)
                _ = try scratch.apply(page, to: .feed(collection: collection.name))
                return page
            }
            guard page.hasMore else { break }
            since = page.cursor
        }
        return try scratch.records(query)
    }
}
