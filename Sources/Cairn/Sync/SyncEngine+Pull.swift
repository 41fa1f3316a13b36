import CairnProtocol
import Foundation

extension SyncEngine {
    /// Downloads and reads one page in the background.
    nonisolated func fetchPage(_ collection: String, since: String?, limit: Int, filter: Filter?) -> Task<PulledPage, any Error> {
        Task { [api, store] in
            let body = try await api.changes(collection: collection, since: since, limit: limit, filter: filter)
            return try store.scan(body, collection: collection)
        }
    }

    /// The collections to pull: the given ones, or every collection ordered by the download phases.
    func pullOrder(_ collections: [String]?) -> [String] {
        if let collections { return collections }
        let all = store.schema?.collections.map(\.name) ?? []
        var ordered: [String] = []
        for phase in configuration.downloadPhases {
            for name in phase where all.contains(name) && !ordered.contains(name) { ordered.append(name) }
        }
        return ordered + all.filter { !ordered.contains($0) }
    }

    /// Pulls each collection page by page; each page and its cursor commit together, so an interruption costs at
    /// most one page.
    func pull(_ collections: [String]?, into summary: inout SyncSummary) async throws {
        let pageSize = min(max(configuration.pageSize, 1), 10_000)
        for name in pullOrder(collections) {
            if try DownloadQueryStore(store: store).isPartial(name) {
                try await pullThroughQueries(name, pageSize: pageSize, into: &summary)
                continue
            }
            let firstPullDone = try store.pullState(name).firstPullDone
            await status.update { $0.collections[name] = CollectionProgress(firstPullCompleted: firstPullDone) }
            try store.markPulling(name)
            var expiredOnce = false
            var prefetched: Task<PulledPage, any Error>?
            defer { prefetched?.cancel() }
            while true {
                try Task.checkCancellation()
                let state = try store.pullState(name)
                let page: PulledPage
                do {
                    // The next page downloads and is read while this one is written.
                    let fetch = prefetched ?? fetchPage(name, since: state.cursor, limit: pageSize, filter: nil)
                    prefetched = nil
                    page = try await fetch.value
                } catch let error as CairnError where error.code == .cursorExpired && !expiredOnce {
                    // Too old: take a fresh snapshot of this collection only, keeping pending changes.
                    expiredOnce = true
                    try store.beginResync(name)
                    continue
                }
                if page.hasMore { prefetched = fetchPage(name, since: page.cursor, limit: pageSize, filter: nil) }
                await status.update {
                    $0.collections[name, default: CollectionProgress()].downloadedBytes += page.bytes
                    $0.collections[name, default: CollectionProgress()].downloadedRecords += page.changes.count
                }
                let applied = try store.applyPage(page, collection: name)
                summary.pulled += applied.changes
                let firstDone = !applied.hasMore && !state.firstPullDone
                await status.update {
                    $0.collections[name, default: CollectionProgress()].appliedRecords += applied.changes
                    if !applied.hasMore { $0.collections[name, default: CollectionProgress()].firstPullCompleted = true }
                }
                if firstDone { await status.emit(.firstPullCompleted(collection: name)) }
                if !applied.hasMore { break }
            }
        }
    }
}
