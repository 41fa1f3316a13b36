import CairnProtocol
import Foundation

/// A request for one page: the cursor it moves, where the feed continues (`nil`: a fresh snapshot), the filter
/// of the records it selects, and the versions of the store's own writes the feed may leave out.
struct PageRequest: Sendable, Hashable {
    var cursor: PageCursor
    var since: String?
    var filter: Filter?
    /// The versions of this store's accepted writes (sent as `own=`): their states are not sent back.
    var own: VersionRanges? = nil

    /// The request of the page that follows `page` from the same source.
    func next(after page: PulledPage) -> PageRequest { next(cursor: page.cursor) }

    /// The request of the page that follows the page whose cursor is `cursor`, from the same source.
    func next(cursor: String) -> PageRequest {
        var next = self
        next.since = cursor
        return next
    }
}

/// Where pulled pages come from: the collection's changes feed (``FeedSource``) or a download query
/// (``DownloadQuerySource``); a server-built snapshot or a change of the user's data rules would be another.
///
/// The engine's one pull loop (``SyncEngine/pull(from:pages:into:)``) asks a source for its next request from the
/// stored cursors, downloads the page, and applies it through the store's one apply path
/// (``LocalStore/apply(_:to:)``), which moves the request's cursor in the same transaction.
protocol PageSource: Sendable {
    /// The collection whose records the source's pages write.
    var collection: String { get }

    /// The request for the next page, read from the stored cursors; `nil` when there is nothing to pull (a download
    /// query deleted meanwhile). Runs on the store's queue.
    func nextRequest(_ store: LocalStore) throws -> PageRequest?

    /// Starts the source over after `410 cursor_expired` answered `request`. Runs on the store's queue.
    func restart(after request: PageRequest, _ store: LocalStore) throws

    /// True when `page`, which answered `request`, ends the source's pull.
    func isLast(_ page: PulledPage, of request: PageRequest) -> Bool

    /// Applies `change` to each progress entry of `status` a page of this source counts in.
    func count(in status: inout SyncStatus, _ change: (inout CollectionProgress) -> Void)
}
