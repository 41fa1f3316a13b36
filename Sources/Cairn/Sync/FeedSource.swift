import CairnProtocol
import Foundation

/// A collection's changes feed, from its cursor in `cairn_collections`; after `cursor_expired`, a fresh snapshot
/// that replaces the local records (keeping those with local changes).
struct FeedSource: PageSource {
    let collection: String

    /// From the stored cursor, leaving out the states of the store's own writes (a snapshot lists every record).
    func nextRequest(_ store: LocalStore) throws -> PageRequest? {
        let state = try store.pullStates.state(collection)
        return PageRequest(cursor: .feed(collection: collection), since: state.cursor, filter: nil, own: state.cursor == nil ? nil : state.own)
    }

    func restart(after request: PageRequest, _ store: LocalStore) throws {
        try store.pullStates.beginResync(collection)
    }

    func isLast(_ page: PulledPage, of request: PageRequest) -> Bool { !page.hasMore }

    func count(in status: inout SyncStatus, _ change: (inout CollectionProgress) -> Void) {
        change(&status.collections[collection, default: CollectionProgress()])
    }
}
