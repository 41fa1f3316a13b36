import CairnProtocol
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension SyncEngine {
    /// What to pull: the given collections (with only the download queries `only` names for those it lists), or
    /// every collection by download phase, without what only groups of phase 0 or below name (``PullPlan``).
    func pullTargets(_ collections: [String]?, only: [String: Set<String>]) async throws -> [PullTarget] {
        if let collections { return collections.map { PullTarget(collection: $0, queries: only[$0]) } }
        return try await store.offPool { [configuration] in try PullPlan(configuration: configuration, store: $0).automatic() }
    }

    /// Pulls each collection: from its feed, or, for a collection pulled through download queries, from each query in
    /// turn, then sweeps the records no query holds (once all have pulled) and notes the collection pulled.
    ///
    /// With a `schemaCheck` still on its way, the first answers are asked for while it travels, and nothing is applied
    /// before it ends: a schema that changed drops those answers and plans the pull again from the new schema.
    func pull(
        _ collections: [String]?, onlyQueries: [String: Set<String>] = [:], schemaCheck: Task<Bool, any Error>? = nil,
        into summary: inout SyncSummary
    ) async throws {
        // One sizer for the whole pull: what one collection's pages showed of the link holds for the next.
        let pages = PageSizer(base: configuration.pageSize, adapts: configuration.adaptsPageSize)
        var targets = try await pullTargets(collections, only: onlyQueries)
        var ahead: [String: PrefetchedAnswer] = [:]
        defer { for answer in ahead.values { answer.cancel() } }
        if let schemaCheck {
            try await askAhead(for: targets.prefix(Self.collectionsAsked + 1), pageSize: pages.base, into: &ahead)
            if try await schemaCheck.value {
                for answer in ahead.values { answer.cancel() }
                ahead = [:]
                targets = try await pullTargets(collections, only: onlyQueries)
            }
        }
        if configuration.downloadConcurrency > 1 {
            summary.add(try await pullAtOnce(targets, pages: pages))
            return
        }
        for (index, target) in targets.enumerated() {
            try await askAhead(for: targets[(index + 1)...].prefix(Self.collectionsAsked), pageSize: pages.base, into: &ahead)
            summary.add(try await pull(target, pages: pages, prefetched: ahead.removeValue(forKey: target.collection)))
        }
    }

    /// Pulls `targets` phase by phase, up to ``CairnConfiguration/downloadConcurrency`` of one phase at once (the
    /// targets of no phase are the last): each commits its own pages, and a phase ends before the next starts.
    private func pullAtOnce(_ targets: [PullTarget], pages: PageSizer) async throws -> SyncSummary {
        var summary = SyncSummary()
        var phases: [[PullTarget]] = []
        for target in targets {
            if let last = phases.last?.last, last.phase == target.phase { phases[phases.count - 1].append(target) } else { phases.append([target]) }
        }
        let width = configuration.downloadConcurrency
        for phase in phases {
            try await withThrowingTaskGroup(of: SyncSummary.self) { group in
                var waiting = phase[...]
                for target in waiting.prefix(width) { group.addTask { try await self.pull(target, pages: pages, prefetched: nil) } }
                waiting = waiting.dropFirst(width)
                while let done = try await group.next() {
                    summary.add(done)
                    if let target = waiting.popFirst() { group.addTask { try await self.pull(target, pages: pages, prefetched: nil) } }
                }
            }
        }
        return summary
    }

    /// Pulls one collection: from its feed, or through each of its download queries the target names in turn, then
    /// notes it pulled and says so once (``SyncEvent/firstPullCompleted(collection:)``).
    private func pull(_ target: PullTarget, pages: PageSizer, prefetched: PrefetchedAnswer?) async throws -> SyncSummary {
        var summary = SyncSummary()
        let name = target.collection
        let (firstPullDone, queries) = try await store.offPool { store in
            let queries = DownloadQueryStore(store: store)
            let firstPullDone = try store.pullStates.state(name).firstPullDone
            try store.pullStates.markPulling(name)
            return (firstPullDone, try queries.isPartial(name) ? try queries.states(collection: name) : nil)
        }
        await status.update { $0.collections[name] = CollectionProgress(firstPullCompleted: firstPullDone) }
        if let queries {
            prefetched?.cancel()
            // The own writes each query's pull leaves out: forgotten once every query has pulled past them.
            let sentOwn = try await store.offPool { try $0.pullStates.state(name).own?.highest }
            for query in queries where target.queries?.contains(query.name) ?? true {
                await status.update { $0.downloadQueries[query.name] = CollectionProgress(firstPullCompleted: query.firstPullDone) }
                guard try await pull(from: DownloadQuerySource(name: query.name, collection: name), pages: pages, into: &summary) else {
                    continue
                }
                await status.update { $0.downloadQueries[query.name, default: CollectionProgress()].firstPullCompleted = true }
            }
            try await store.offPool { store in
                try DownloadQueryStore(store: store).finishPull(name)
                if target.queries == nil, let sentOwn { try store.pullStates.forgetOwn(name, through: sentOwn) }
            }
        } else {
            try await pull(from: FeedSource(collection: name), pages: pages, prefetched: prefetched, into: &summary)
        }
        await status.update { $0.collections[name, default: CollectionProgress()].firstPullCompleted = true }
        if !firstPullDone { await status.emit(.firstPullCompleted(collection: name)) }
        return summary
    }

    /// The one pull loop: pulls `source` page by page until its last page. Each page and its cursor commit together,
    /// so an interruption costs at most one page; the next page downloads and is read while this one is written; one
    /// `410 cursor_expired` starts the source over. The store's work runs on its own queue, off the cooperative pool.
    /// Pages are as large as `pages` says: larger on links with long round trips.
    ///
    /// - Returns: false when the source had nothing to pull (a download query deleted meanwhile).
    @discardableResult
    func pull(
        from source: some PageSource, pages: PageSizer, prefetched: PrefetchedAnswer? = nil, into summary: inout SyncSummary
    ) async throws -> Bool {
        var expiredOnce = false
        await beginDownloadProgress(of: source.collection)
        if configuration.streamsPages, serverStreamsPages {
            if let ended = try await pullStreaming(from: source, pageSize: pages.base, prefetched: prefetched, into: &summary) { return ended }
            // A server from before streams answered one page: page by page from now on.
            serverStreamsPages = false
        }
        let pipeline = PagePipeline(depth: { pages.pagesAhead }) { [self] request, pipeline in fetchPage(request, pages: pages, pipeline: pipeline) }
        defer { pipeline.close() }
        while true {
            try Task.checkCancellation()
            // cancelDownload(): stop before the next page; every page applied so far stays, with its cursor.
            try stopIfCancelled(.download)
            guard let request = try await store.offPool({ try source.nextRequest($0) }) else { return false }
            let fetch = pipeline.take(request)
            let page: PulledPage
            do {
                page = try await fetch.value
            } catch let error as CairnError where error.code == .cursorExpired && !expiredOnce {
                expiredOnce = true
                try await store.offPool { try source.restart(after: request, $0) }
                continue
            }
            // Asked for already when the answer's head named the cursor; else now (a transport that does not tell heads).
            if page.hasMore { pipeline.prefetch(request.next(after: page)) }
            try await apply(page, answering: request, from: source, into: &summary)
            if source.isLast(page, of: request) { return true }
        }
    }

    /// How many of the next collections' first answers are asked for while one collection is pulled.
    static let collectionsAsked = 3

    /// Asks ahead for the first answer of each of `targets` pulled from its feed (not through download queries) that
    /// has none asked for yet, when the server streams pages: their round trips then pass while the collection
    /// before them downloads.
    func askAhead(for targets: ArraySlice<PullTarget>, pageSize: Int, into ahead: inout [String: PrefetchedAnswer]) async throws {
        guard configuration.streamsPages, serverStreamsPages else { return }
        let names = targets.map(\.collection).filter { ahead[$0] == nil }
        guard !names.isEmpty else { return }
        // One trip to the store's queue for all of them.
        let requests = try await store.offPool { store -> [(String, PageRequest)] in
            let queries = DownloadQueryStore(store: store)
            return try names.compactMap { name in
                try queries.isPartial(name) ? nil : try FeedSource(collection: name).nextRequest(store).map { (name, $0) }
            }
        }
        for (name, request) in requests { ahead[name] = prefetch(request, pageSize: pageSize) }
    }

    /// Applies one pulled page with its cursor in one transaction, and counts it in the status, the progress and the
    /// log: the one step of both pull loops.
    func apply(_ page: PulledPage, answering request: PageRequest, from source: some PageSource, into summary: inout SyncSummary) async throws {
        let (bytes, records) = (page.bytes, page.changes.count)
        await status.update { status in
            source.count(in: &status) {
                $0.downloadedBytes += bytes
                $0.downloadedRecords += records
            }
        }
        let applied = try await store.offPool { store in
            let applied = try store.apply(page, to: request.cursor)
            releaseFreedMemory()
            return applied
        }
        summary.pulled += applied.changes
        await noteDownloadProgress(applied.changes, total: page.total, of: source.collection)
        log.pagePulled(collection: request.cursor.collection, changes: applied.changes)
        await status.update { status in source.count(in: &status) { $0.appliedRecords += applied.changes } }
    }

    /// Downloads and reads one page in the background, while the page before it is written on the store's queue; the
    /// page after it is asked for as soon as this answer's head names its cursor. Reading is CPU work without locks or
    /// disk waits, so it stays on the cooperative pool: a queue of its own added threads whose malloc arenas raised the
    /// client's peak memory by 10-15 MB (`cairn bench`), for no speed.
    ///
    /// Its size is what `pages` says when it is asked for; what it took to arrive then sizes the pages after it.
    nonisolated func fetchPage(_ request: PageRequest, pages: PageSizer, pipeline: PagePipeline) -> Task<PulledPage, any Error> {
        Task { [api, store] in
            let collection = request.cursor.collection
            let arrival = try await api.changes(
                collection: collection, since: request.since, limit: pages.limit, filter: request.filter, own: request.own
            ) { cursor in pipeline.prefetch(request.next(cursor: cursor)) }
            // Decompressing and reading are two slices of CPU work: the app's tasks get a cooperative thread between them.
            await Task.yield()
            let page = try store.scan(arrival.body, answering: request)
            if let headWait = arrival.headWait, let bodyTime = arrival.bodyTime {
                pages.observe(records: page.changes.count, headWait: headWait, serverTime: arrival.serverTime, body: bodyTime)
            }
            return page
        }
    }
}

/// Gives the memory a written page freed back to the system. On Linux each thread that allocates can keep freed
/// memory in a malloc arena of its own, and the store's queue is one more such thread: without this, a long pull's
/// peak memory grows by the pages those arenas keep. Elsewhere the allocator returns it by itself.
private func releaseFreedMemory() {
    #if os(Linux)
    _ = glibcMallocTrim(0)
    #endif
}

#if os(Linux)
/// glibc's `malloc_trim` (a GNU extension the Glibc module does not import).
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
