extension CairnClient {
    /// The records that the records `query` selects name in their `reference` field `field` (SAP's navigation
    /// properties), from the local store, by id: the sites of some jobs.
    ///
    /// ```swift
    /// let sites = try client.related(Query("jobs").filter(.condition("done", .eq, false)), via: "site")
    /// ```
    /// - Throws: `invalid_argument` when `field` is not a `reference` field of the query's collection.
    public func related(_ query: Query, via field: String) throws -> [LocalRecord] {
        try checkOpen()
        return try store.related(query, via: field)
    }

    /// The records of `collection` whose `reference` field `field` names one of the records `query` selects, from
    /// the local store, by id: the jobs of some sites (the reverse of ``related(_:via:)``).
    ///
    /// ```swift
    /// let jobs = try client.referrers(of: Query("sites").filter(.condition("region", .eq, "north")), in: "jobs", via: "site")
    /// ```
    /// - Throws: `invalid_argument` when `field` is not a `reference` field of `collection` naming the query's collection.
    public func referrers(of query: Query, in collection: String, via field: String) throws -> [LocalRecord] {
        try checkOpen()
        return try store.referrers(of: query, in: collection, via: field)
    }
}
