import CairnProtocol

/// A page request of the changes feed, read from the query's `since`, `limit`, `where` and `own`; a bad value is
/// `validation_failed` naming the parameter (or the filter's field).
///
/// ```swift
/// let request = try ChangesRequest(since: query.get("since"), limit: query.get("limit"), where: query.get("where"), own: query.get("own"))
/// ```
struct ChangesRequest: Sendable {
    /// Default and largest page sizes.
    static let defaultLimit = 1000
    static let maximumLimit = 10_000

    /// Where to continue; `nil` starts a snapshot.
    var cursor: FeedCursor?
    var limit: Int
    /// The download query, not yet checked against the schema.
    var filter: Filter?
    /// The versions the caller's own writes committed at: with a cursor, the records whose latest state is one of
    /// them are left out (the caller holds them), unless they come as `gone`.
    var own: VersionRanges?
    /// How many pages the answer may carry, one after another (`pages`, ``PageStream``): 1 answers one page object.
    var pages = 1

    init(cursor: FeedCursor?, limit: Int = defaultLimit, filter: Filter? = nil, own: VersionRanges? = nil) {
        self.cursor = cursor
        self.limit = limit
        self.filter = filter
        self.own = own
    }

    init(since: String?, limit: String?, where filterText: String?, own ownText: String? = nil, pages pagesText: String? = nil) throws(ErrorBody) {
        var pageLimit = Self.defaultLimit
        if let limit {
            guard let value = Int(limit), (1...Self.maximumLimit).contains(value) else {
                throw .validation("limit must be an integer from 1 to \(Self.maximumLimit)", field: "limit")
            }
            pageLimit = value
        }
        var cursor: FeedCursor?
        if let since {
            guard let parsed = FeedCursor(token: since) else { throw .validation("since is not a cursor this server issued", field: "since") }
            cursor = parsed
        }
        var filter: Filter?
        if let filterText {
            do {
                filter = try JSONValueDecoder().decode(Filter.self, from: Array(filterText.utf8))
            } catch {
                throw .validation("where is not a valid filter: \(error)", field: "where")
            }
        }
        var own: VersionRanges?
        if let ownText {
            guard let ranges = VersionRanges(text: ownText) else {
                throw .validation(
                    "own must list versions and ranges of versions, such as 1001-2000,2005 (at most \(VersionRanges.maximumCount))", field: "own")
            }
            own = ranges
        }
        self.init(cursor: cursor, limit: pageLimit, filter: filter, own: own)
        if let pagesText {
            guard let value = Int(pagesText), (1...PageStream.maximumPages).contains(value) else {
                throw .validation("pages must be an integer from 1 to \(PageStream.maximumPages)", field: PageStream.parameter)
            }
            pages = value
        }
    }

    /// The request of the page after one that ended at `cursor`.
    func after(_ cursor: FeedCursor) -> ChangesRequest {
        var next = self
        next.cursor = cursor
        return next
    }
}
