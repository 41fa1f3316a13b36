import CairnProtocol
import Foundation

/// A download query's pages: first, while its filter changed, the snapshot of the records it newly selects
/// (`filter AND NOT held`); then its feed from its cursor (a fresh snapshot the first time and after
/// `cursor_expired`).
struct DownloadQuerySource: PageSource {
    /// The query's name.
    let name: String
    /// Its collection.
    let collection: String

    func nextRequest(_ store: LocalStore) throws -> PageRequest? {
        let queries = DownloadQueryStore(store: store)
        guard var state = try queries.state(name) else { return nil }
        if let held = state.heldFilter {
            return PageRequest(
                cursor: .query(name: name, collection: state.collection, phase: .widening), since: state.widenCursor,
                filter: .and([state.filter, .not(held)]))
        }
        if state.cursor == nil, !state.resyncing {
            try queries.beginSnapshot(name)
            state.resyncing = true
        }
        // Changes after the cursor leave out the states of the store's own writes, as the collection's feed does.
        let own = state.cursor == nil || state.resyncing ? nil : try store.pullStates.state(state.collection).own
        return PageRequest(
            cursor: .query(name: name, collection: state.collection, phase: .main(snapshot: state.resyncing)), since: state.cursor,
            filter: state.filter, own: own)
    }

    func restart(after request: PageRequest, _ store: LocalStore) throws {
        let queries = DownloadQueryStore(store: store)
        if case .query(_, _, .widening) = request.cursor { try queries.restartWidening(name) } else { try queries.beginSnapshot(name) }
    }

    /// The last page of the query's feed; the last page of a filter change's snapshot is followed by the feed.
    func isLast(_ page: PulledPage, of request: PageRequest) -> Bool {
        if case .query(_, _, .widening) = request.cursor { return false }
        return !page.hasMore
    }

    /// A page counts in the query's progress and in its collection's.
    func count(in status: inout SyncStatus, _ change: (inout CollectionProgress) -> Void) {
        change(&status.downloadQueries[name, default: CollectionProgress()])
        change(&status.collections[collection, default: CollectionProgress()])
    }
}
