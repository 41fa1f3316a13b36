@_exported import CairnProtocol
import Foundation
import Synchronization

/// The Cairn client: a local store that the app reads and writes with no network, kept in sync with a Cairn server.
///
/// ```swift
/// let client = try await CairnClient.open(CairnConfiguration(
///     serverURL: URL(string: "https://sync.example.com")!, project: "field", device: "iPad-7",
///     credentials: .password(user: "alice", password: password), store: .file(storePath)))
///
/// try client.save(Note(title: "Check exits", done: false), in: "notes", id: "n-1")   // offline is fine
/// let open = try client.records(Query("notes").filter(.condition("done", .eq, false)))
/// try await client.sync()                                                              // push, then pull
/// ```
///
/// Local reads and writes are synchronous and never wait on the network: a write has been committed, with its
/// upload queued, by the time the call returns.
public final class CairnClient: Sendable {
    /// The configuration the client was opened with.
    public let configuration: CairnConfiguration
    let store: LocalStore
    let api: RemoteAPI
    let engine: SyncEngine
    let statusCenter: StatusCenter
    let auth: AuthSession
    let closed = Mutex(false)
    /// The event input of the running scheduler (``run()``), if one runs.
    let schedulerInput = Mutex<AsyncStream<SyncScheduler.Event?>.Continuation?>(nil)
    /// The time since ``run()`` started, on its clock, while it runs.
    let schedulerStopwatch = Mutex<(@Sendable () -> Duration)?>(nil)
    let fileFolder: FileFolder
    let fileCache: FileCache
    let fileUploader: FileUploader
    /// File uploads, downloads, prefetch and their progress reports: cancelled and awaited at ``close()``.
    let background = BackgroundWork()
    /// What sharing a store file with other processes needs (nil in memory).
    let shared: SharedStore?

    init(configuration: CairnConfiguration, store: LocalStore, api: RemoteAPI, auth: AuthSession) {
        self.configuration = configuration
        self.store = store
        self.api = api
        self.auth = auth
        self.statusCenter = StatusCenter()
        self.shared = SharedStore(store: store, configuration: configuration)
        self.engine = SyncEngine(store: store, api: api, configuration: configuration, status: statusCenter, lease: shared?.lease)
        self.fileFolder = FileFolder(store: configuration.store, keys: store)
        self.fileCache = FileCache(
            store: store, api: api, folder: fileFolder, configuration: configuration, status: statusCenter, work: background)
        self.fileUploader = FileUploader(
            store: store, api: api, folder: fileFolder, configuration: configuration, status: statusCenter, cache: fileCache, work: background,
            lease: shared?.lease)
        engine.owner.set(self)
        watchOtherProcesses()
    }

    deinit {
        // Decrypted copies, and a store in memory's whole file folder, are of no use to anyone once the client is gone.
        fileFolder.removeLeftovers()
    }

    /// File attachments: uploads, downloads into the local cache, and the server's files.
    public var files: CairnFiles { CairnFiles(client: self) }

    func checkOpen() throws {
        if closed.withLock({ $0 }) { throw CairnError.clientClosed }
    }

    // MARK: Schema

    /// The project's schema as last fetched (the store keeps it, so it is known offline).
    public var schema: Schema? { store.schema }

    /// The local table name of a collection, for apps that write their own SQL.
    ///
    /// ```swift
    /// let table = try client.tableName(for: "notes")
    /// let rows = try client.rows("SELECT title FROM \(table) WHERE done = 0")
    /// ```
    public func tableName(for collection: String) throws -> String {
        try checkOpen()
        return try store.tableName(collection)
    }

    /// Fetches the schema now (a cheap `304` when unchanged) and migrates local tables to it.
    public func refreshSchema() async throws {
        try checkOpen()
        try await engine.refreshSchema()
    }

    // MARK: Sync

    /// Uploads pending changes, then downloads every collection's changes.
    @discardableResult
    public func sync() async throws -> SyncSummary {
        try checkOpen()
        await fileUploader.kick()
        let summary = try await engine.run(SyncScope(push: true, pull: true, collections: nil))
        afterSync(pulled: nil)
        return summary
    }

    /// Uploads pending changes only.
    @discardableResult
    public func push() async throws -> SyncSummary {
        try checkOpen()
        await fileUploader.kick()
        let summary = try await engine.run(SyncScope(push: true, pull: false, collections: nil))
        afterSync(pulled: [])
        return summary
    }

    /// Downloads changes of the given collections; when `nil`, of every collection by download phase, without the
    /// collections and download queries that only groups of phase 0 or below name (``DownloadGroup``).
    @discardableResult
    public func pull(_ collections: [String]? = nil) async throws -> SyncSummary {
        try checkOpen()
        if let collections { for name in collections { _ = try store.collection(name) } }
        let summary = try await engine.run(SyncScope(push: false, pull: true, collections: collections))
        afterSync(pulled: collections)
        return summary
    }

    /// File work that follows a sync, in the background: uploads whose records were just pushed start, and the
    /// configured collections' files are prefetched (`pulled` nil: every collection was pulled).
    func afterSync(pulled: [String]?) {
        let prefetch = configuration.prefetchFiles.filter { pulled?.contains($0) ?? true }.sorted()
        let (uploader, files, store) = (fileUploader, self.files, self.store)
        background.start {
            await uploader.kick()
            for collection in prefetch { _ = try? await files.prefetch(collection: collection) }
            // Download queries that prefetch, read here rather than on the sync's way out.
            let queries = ((try? await store.offPool { try DownloadQueryStore(store: $0).states(collection: nil) }) ?? [])
                .filter { $0.prefetchFiles && !prefetch.contains($0.collection) && (pulled?.contains($0.collection) ?? true) }
            for query in queries { _ = try? await files.prefetch(query: query.name) }
        }
    }

    /// Downloads the members of a download group named in ``CairnConfiguration/downloadGroups``, whatever its
    /// phase (a group of phase 0 or below is pulled only this way): its collections whole, and of its download
    /// queries only those, in phase order (members without a phase last, in the group's order).
    /// - Throws: `invalid_argument` for an unknown group, or a member that names no collection or download query, or
    ///   both.
    @discardableResult
    public func pull(group: String) async throws -> SyncSummary {
        try checkOpen()
        return try await pull(targets: try PullPlan(configuration: configuration, store: store).members(of: group))
    }

    /// Pulls `targets` (collections whole, or some of their download queries), then starts the file work that
    /// follows: the one path of ``pull(group:)`` and of the scheduler's pulls after a notice.
    func pull(targets: [PullTarget]) async throws -> SyncSummary {
        let summary = try await engine.run(SyncScope(pulling: targets))
        afterSync(pulled: targets.map(\.collection))
        return summary
    }

    /// Stops the running upload for every caller that joined it, before its next batch: the batches already sent
    /// are answered and recorded, the rest stays queued, and the run ends with `cancelled`. Cancelling one caller's
    /// task only detaches that caller; this stops the upload itself.
    ///
    /// ```swift
    /// let syncing = Task { try await client.sync() }
    /// await client.cancelUpload()   // syncing ends with `cancelled`; nothing queued is lost
    /// ```
    ///
    /// - Returns: false when no sync was running.
    @discardableResult
    public func cancelUpload() async -> Bool { await engine.cancel(.upload) }

    /// Stops the running download for every caller that joined it, before its next page: every page applied so far
    /// stays (with its cursor, so the next pull goes on from there), and the run ends with `cancelled`.
    ///
    /// - Returns: false when no sync was running.
    @discardableResult
    public func cancelDownload() async -> Bool { await engine.cancel(.download) }

    /// Status updates, starting with the current status.
    public func statusUpdates() async -> AsyncStream<SyncStatus> {
        await refreshCounts()
        return await statusCenter.statusStream()
    }

    /// The current status.
    public func status() async -> SyncStatus {
        await refreshCounts()
        var status = await statusCenter.status
        // The next wake is dated now, from the scheduler's clock: the device's clock may have changed since.
        if let elapsed = schedulerStopwatch.withLock({ $0 }) { status.scheduler.date(at: elapsed(), wallClock: configuration.wallClock.now()) }
        return status
    }

    /// Sync events as they happen.
    public func events() async -> AsyncStream<SyncEvent> { await statusCenter.eventStream() }

    /// The persisted history of sync runs, newest first.
    public func history(limit: Int = 50) throws -> [SyncHistoryEntry] {
        try checkOpen()
        return try store.history.entries(limit: limit)
    }

    /// The sync runs the history keeps that `filter` selects (kinds, a time range, failures only), newest first
    /// (SAP's `eventHistory(matching:)`).
    ///
    /// ```swift
    /// let failedPushes = try client.history(matching: HistoryFilter(kinds: [.push, .sync], failedOnly: true))
    /// ```
    public func history(matching filter: HistoryFilter, limit: Int = 50) throws -> [SyncHistoryEntry] {
        try checkOpen()
        return try store.history.entries(matching: filter, limit: limit)
    }

    /// True when the store file opened for reading only: its file or folder cannot be written (a read-only file
    /// system, no write permission). Reads work; writes and syncs throw `store_read_only`.
    ///
    /// ```swift
    /// if client.isReadOnly { showBanner("This copy is read-only") }
    /// ```
    public var isReadOnly: Bool { store.isReadOnly }

    /// True when local changes or file deletions wait for upload (also after a crash or restart).
    public var hasPendingUpload: Bool { (try? store.uploads.hasPendingUpload()) ?? false }

    /// True when a download did not complete (interrupted, or a collection is new or changed).
    public var hasPendingDownload: Bool { (try? store.pullStates.hasPendingDownload()) ?? false }

    /// True once the collection's first full pull completed.
    public func isFirstPullComplete(_ collection: String) throws -> Bool { try store.pullStates.state(collection).firstPullDone }

    /// Puts what the store remembers of its last syncs (``SyncFacts``) into the status: at open.
    func loadSyncFacts() async {
        let store = self.store
        guard let facts = try? await store.offPool({ store in try store.writer.read { db in try SyncFacts.read(db, store.metaTable) } }) else {
            return
        }
        await statusCenter.update { facts.apply(to: &$0) }
    }

    func refreshCounts() async {
        guard let counts = try? store.uploads.counts() else { return }
        await statusCenter.update {
            $0.pendingUploads = counts.pending
            $0.failedUploads = counts.failed
        }
        await fileUploader.refreshCounts()
    }
}
