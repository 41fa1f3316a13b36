import CairnProtocol
import Foundation

extension SyncEngine {
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
            let filter = configuration.downloadFilters[name]
            let filterText = try filter.map { String(decoding: try CairnJSON.encode($0), as: UTF8.self) }
            try store.resetCursor(name, filter: filterText)
            let firstPullDone = try store.pullState(name).firstPullDone
            await status.update { $0.collections[name] = CollectionProgress(firstPullCompleted: firstPullDone) }
            try store.markPulling(name)
            var expiredOnce = false
            while true {
                try Task.checkCancellation()
                let state = try store.pullState(name)
                let body: Data
                do {
                    body = try await api.changes(collection: name, since: state.cursor, limit: pageSize, filter: filter)
                } catch let error as CairnError where error.code == .cursorExpired && !expiredOnce {
                    // Too old: take a fresh snapshot of this collection only, keeping pending changes.
                    expiredOnce = true
                    try store.beginResync(name)
                    continue
                }
                await status.update {
                    $0.collections[name, default: CollectionProgress()].downloadedBytes += body.count
                }
                let page = try store.applyPage(body, collection: name)
                summary.pulled += page.changes
                let firstDone = !page.hasMore && !state.firstPullDone
                await status.update {
                    $0.collections[name, default: CollectionProgress()].downloadedRecords += page.changes
                    $0.collections[name, default: CollectionProgress()].appliedRecords += page.changes
                    if !page.hasMore { $0.collections[name, default: CollectionProgress()].firstPullCompleted = true }
                }
                if firstDone { await status.emit(.firstPullCompleted(collection: name)) }
                if !page.hasMore { break }
            }
        }
    }
}
