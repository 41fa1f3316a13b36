import CairnProtocol
import Foundation

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
        let body = try await api.changes(collection: collection, since: nil, limit: 1, filter: .condition("id", .eq, .string(id)))
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
