import CairnProtocol

extension CairnClient {
    /// Creates a persistent download query: from now on `collection` is pulled only through its download queries
    /// (partial sync), and this one brings the records matching `filter`, with its own cursor. Queries survive
    /// restarts; queries of one collection may overlap.
    ///
    /// Marking a collection that was pulled whole drops, once its queries have pulled, the records none of them holds
    /// (records with local changes stay).
    ///
    /// ```swift
    /// try client.createDownloadQuery(name: "north", collection: "sites", filter: .condition("region", .eq, "north"))
    /// try await client.pull()
    /// ```
    ///
    /// With `prefetchFiles`, the files its records point at are downloaded in the background after each sync, as
    /// ``CairnConfiguration/prefetchFiles`` does for whole collections (within the file cache's bound).
    ///
    /// - Throws: `already_exists` for a taken name; `validation_failed` for a filter that does not fit the schema.
    public func createDownloadQuery(name: String, collection: String, filter: Filter, prefetchFiles: Bool = false) throws {
        try checkOpen()
        try DownloadQueryStore(store: store).create(name: name, collection: collection, filter: filter, prefetchFiles: prefetchFiles)
    }

    /// Changes a query's filter. Records that no longer match leave the device now (unless another query holds them
    /// or they have local changes); the next pull downloads only the records that newly match, then goes on from the
    /// query's cursor.
    public func updateDownloadQuery(name: String, filter: Filter) throws {
        try checkOpen()
        try DownloadQueryStore(store: store).update(name: name, filter: filter)
    }

    /// Deletes a query: the records it alone held leave the device, unless they have local changes. The collection
    /// stays pulled through queries only.
    public func deleteDownloadQuery(name: String) throws {
        try checkOpen()
        try DownloadQueryStore(store: store).delete(name: name)
    }

    /// The download queries (of one collection, or all), by name.
    public func downloadQueries(collection: String? = nil) throws -> [DownloadQuery] {
        try checkOpen()
        return try DownloadQueryStore(store: store).queries(collection: collection)
    }

    /// One download query, if it exists.
    public func downloadQuery(named name: String) throws -> DownloadQuery? {
        try downloadQueries().first { $0.name == name }
    }

    /// Marks a collection to be pulled only through download queries, even before it has any (it then downloads
    /// nothing).
    public func downloadOnlyThroughQueries(_ collection: String) throws {
        try checkOpen()
        try DownloadQueryStore(store: store).markPartial(collection)
    }

    /// Pulls a collection whole again: deletes its download queries, and the next pull takes a fresh snapshot.
    public func downloadWholeCollection(_ collection: String) throws {
        try checkOpen()
        try DownloadQueryStore(store: store).downloadWhole(collection)
    }
}
