import CairnProtocol

extension CairnClient {
    /// Adds a local index over fields of a collection (in order), so that queries filtering or sorting on them read
    /// the index instead of every row. The index is kept with the store: it is created now if the collection's table
    /// exists, and again whenever the table is created anew. Schema indexes are created without asking.
    ///
    /// ```swift
    /// try client.createIndex("visits", fields: ["site", "due"])
    /// let next = try client.records(Query("visits").filter(.condition("site", .eq, "S-12")).sorted(by: "due"))
    /// ```
    ///
    /// A field may be a path inside a `json` field: `createIndex("sites", fields: ["address.city"])` indexes the value
    /// that `Query("sites").filter(.condition("address.city", .eq, "Lyon"))` and `.sorted(by: "address.city")` read.
    ///
    /// Indexes can also be named before opening, in ``CairnConfiguration/localIndexes``.
    public func createIndex(_ collection: String, fields: [String]) throws {
        try checkOpen()
        try store.indexes.addIndex(.init(collection: collection, kind: .index, fields: fields))
    }

    /// Makes the string `fields` of a collection searchable by words with ``Query/matching(_:)``; the index follows
    /// every local write, pull and deletion. Replaces the collection's previous full-text fields. Accents and ASCII
    /// case are ignored when matching.
    ///
    /// ```swift
    /// try client.enableFullTextSearch(in: "notes", fields: ["title", "body"])
    /// let hits = try client.records(Query("notes").matching("fire ext").filter(.condition("done", .eq, false)))
    /// ```
    public func enableFullTextSearch(in collection: String, fields: [String]) throws {
        try checkOpen()
        try store.indexes.addIndex(.init(collection: collection, kind: .fullText, fields: fields))
    }

    /// Drops a collection's full-text index.
    public func disableFullTextSearch(in collection: String) throws {
        try checkOpen()
        try store.indexes.removeFullText(collection: collection)
    }

    /// How many records a query selects (within its limit and offset).
    ///
    /// ```swift
    /// let open = try client.count(Query("notes").filter(.condition("done", .eq, false)))
    /// ```
    public func count(_ query: Query) throws -> Int {
        try checkOpen()
        return try store.count(query)
    }

    /// Applies the indexes and full-text fields named in the configuration (at open).
    func applyConfiguredIndexes() throws {
        for (collection, indexes) in configuration.localIndexes.sorted(by: { $0.key < $1.key }) {
            for fields in indexes { try store.indexes.addIndex(.init(collection: collection, kind: .index, fields: fields)) }
        }
        for (collection, fields) in configuration.fullTextSearch.sorted(by: { $0.key < $1.key }) {
            try store.indexes.addIndex(.init(collection: collection, kind: .fullText, fields: fields))
        }
    }
}
