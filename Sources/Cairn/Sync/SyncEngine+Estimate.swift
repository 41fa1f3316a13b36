import CairnProtocol
import Foundation

extension SyncEngine {
    /// The next automatic download's ``DownloadEstimate``: for each collection (or download query) whose snapshot is
    /// still to come, one record is asked for, and the first page's `total` says how many the snapshot holds.
    func estimateDownload() async throws -> DownloadEstimate {
        let targets = try await pullTargets(nil, only: [:])
        let sources = try await store.offPool { store -> [(name: String, request: PageRequest?)] in
            let queries = DownloadQueryStore(store: store)
            var sources: [(String, PageRequest?)] = []
            for target in targets {
                if try queries.isPartial(target.collection) {
                    for query in try queries.states(collection: target.collection) where target.queries?.contains(query.name) ?? true {
                        sources.append((query.name, try DownloadQuerySource(name: query.name, collection: target.collection).nextRequest(store)))
                    }
                } else {
                    sources.append((target.collection, try FeedSource(collection: target.collection).nextRequest(store)))
                }
            }
            return sources
        }
        var estimate = DownloadEstimate(snapshots: [:], incremental: [], perSecond: await status.status.lastDownloadRate)
        try await withThrowingTaskGroup(of: (String, Int?).self) { group in
            for (name, request) in sources {
                guard let request else { continue }
                guard request.since == nil else {
                    estimate.incremental.append(request.cursor.collection)
                    continue
                }
                group.addTask { [api, store] in
                    let arrival = try await api.changes(collection: request.cursor.collection, since: nil, limit: 1, filter: request.filter)
                    return (name, try store.scan(arrival.body, answering: request).total)
                }
            }
            for try await (name, total) in group { estimate.snapshots[name] = total ?? 0 }
        }
        estimate.incremental = Array(Set(estimate.incremental)).sorted()
        return estimate
    }
}
