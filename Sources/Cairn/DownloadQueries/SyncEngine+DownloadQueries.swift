import CairnProtocol
import Foundation

extension SyncEngine {
    /// Pulls a collection through its download queries, one after another, each from its own cursor; then sweeps
    /// the records no query holds (once all have pulled) and notes the collection pulled.
    func pullThroughQueries(_ collection: String, pageSize: Int, into summary: inout SyncSummary) async throws {
        let queries = DownloadQueryStore(store: store)
        let firstPullDone = try store.pullState(collection).firstPullDone
        await status.update { $0.collections[collection] = CollectionProgress(firstPullCompleted: firstPullDone) }
        try store.markPulling(collection)
        for query in try queries.states(collection: collection) {
            try await pull(query: query.name, queries: queries, pageSize: pageSize, into: &summary)
        }
        try queries.finishPull(collection)
        await status.update { $0.collections[collection, default: CollectionProgress()].firstPullCompleted = true }
        if !firstPullDone { await status.emit(.firstPullCompleted(collection: collection)) }
    }

    /// Pulls one query: first, while its filter changed, the snapshot of the records it newly selects (`filter AND NOT
    /// held`); then its feed from its cursor (a fresh snapshot the first time and after `cursor_expired`).
    private func pull(query name: String, queries: DownloadQueryStore, pageSize: Int, into summary: inout SyncSummary) async throws {
        guard let first = try queries.state(name) else { return }
        await status.update { $0.downloadQueries[name] = CollectionProgress(firstPullCompleted: first.firstPullDone) }
        var expiredOnce = false
        while true {
            try Task.checkCancellation()
            guard var state = try queries.state(name) else { return }
            let phase: DownloadQueryStore.Phase
            let since: String?
            let filter: Filter
            if let held = state.heldFilter {
                phase = .widening
                since = state.widenCursor
                filter = .and([state.filter, .not(held)])
            } else {
                if state.cursor == nil, !state.resyncing {
                    try queries.beginSnapshot(name)
                    state.resyncing = true
                }
                phase = .main
                since = state.cursor
                filter = state.filter
            }
            let page: PulledPage
            do {
                page = try await fetchPage(state.collection, since: since, limit: pageSize, filter: filter).value
            } catch let error as CairnError where error.code == .cursorExpired && !expiredOnce {
                expiredOnce = true
                if phase == .widening { try queries.restartWidening(name) } else { try queries.beginSnapshot(name) }
                continue
            }
            let applied = try queries.apply(page, query: state, phase: phase)
            summary.pulled += applied.changes
            let collection = state.collection
            await status.update {
                $0.downloadQueries[name, default: CollectionProgress()].downloadedBytes += page.bytes
                $0.downloadQueries[name, default: CollectionProgress()].downloadedRecords += page.changes.count
                $0.downloadQueries[name, default: CollectionProgress()].appliedRecords += applied.changes
                $0.collections[collection, default: CollectionProgress()].downloadedBytes += page.bytes
                $0.collections[collection, default: CollectionProgress()].downloadedRecords += page.changes.count
                $0.collections[collection, default: CollectionProgress()].appliedRecords += applied.changes
            }
            if phase == .main, !applied.hasMore {
                await status.update { $0.downloadQueries[name, default: CollectionProgress()].firstPullCompleted = true }
                return
            }
        }
    }
}
