import CairnProtocol
import Foundation

/// How the server's schema differs from the one a store works with (``CairnClient/fetchSchema()``).
public struct SchemaDifference: Sendable, Hashable {
    /// The server's schema.
    public var server: Schema
    /// Collections the server has and the store lacks.
    public var newCollections: [String]
    /// Collections the store has and the server no longer does.
    public var removedCollections: [String]
    /// Per collection both have, the fields only the server has.
    public var newFields: [String: [String]]
    /// Per collection both have, the fields only the store has.
    public var removedFields: [String: [String]]
    /// Per collection both have, the fields whose type, or whether they are required, differs.
    public var changedFields: [String: [String]]

    /// True when the server's schema has the same collections and fields as the store's.
    public var isEmpty: Bool {
        newCollections.isEmpty && removedCollections.isEmpty && newFields.isEmpty && removedFields.isEmpty && changedFields.isEmpty
    }

    /// The difference between `local` (nil: a store that never had a schema) and `server`.
    init(local: Schema?, server: Schema) {
        self.server = server
        let mine = Dictionary((local?.collections ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let theirs = Dictionary(server.collections.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        newCollections = server.collections.map(\.name).filter { mine[$0] == nil }
        removedCollections = (local?.collections ?? []).map(\.name).filter { theirs[$0] == nil }
        var added: [String: [String]] = [:], removed: [String: [String]] = [:], changed: [String: [String]] = [:]
        for collection in server.collections {
            guard let before = mine[collection.name] else { continue }
            let old = Dictionary(before.fields.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            let new = Dictionary(collection.fields.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            let gained = collection.fields.map(\.name).filter { old[$0] == nil }
            let lost = before.fields.map(\.name).filter { new[$0] == nil }
            let differ = collection.fields.filter { field in old[field.name].map { $0.type != field.type || $0.required != field.required } ?? false }
            if !gained.isEmpty { added[collection.name] = gained }
            if !lost.isEmpty { removed[collection.name] = lost }
            if !differ.isEmpty { changed[collection.name] = differ.map(\.name) }
        }
        newFields = added
        removedFields = removed
        changedFields = changed
    }
}

extension CairnClient {
    /// Asks the server for its schema and says how it differs from the store's, without applying it (SAP's
    /// `fetchMetadata`): the store keeps working with its own until the next sync.
    ///
    /// ```swift
    /// let difference = try await client.fetchSchema()
    /// if !difference.newCollections.isEmpty { showUpdateBanner(difference.newCollections) }
    /// ```
    public func fetchSchema() async throws -> SchemaDifference {
        try checkOpen()
        guard let (schema, _) = try await api.schema(etag: nil) else {
            throw CairnError.badResponse("the server answered 304 to a schema request without an ETag")
        }
        return SchemaDifference(local: store.schema, server: schema)
    }
}
