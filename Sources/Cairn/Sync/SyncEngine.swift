import CairnProtocol
import Foundation

/// What a sync run does.
struct SyncScope: Sendable, Hashable {
    var push: Bool
    var pull: Bool
    /// The collections to pull, in order; `nil` for all, by download phase.
    var collections: [String]?
    /// For collections listed here, only these download queries are pulled (a download group naming queries).
    var onlyQueries: [String: Set<String>] = [:]
    /// Only changes of these upload groups are pushed (no action calls, no file deletions); `nil`: every change not
    /// held (``CairnClient/hold(uploadGroup:)``).
    var uploadGroups: Set<String>? = nil

    var kind: SyncKind { push && pull ? .sync : push ? .push : .pull }
}

/// The two halves of a sync, which ``SyncEngine/cancel(_:)`` stops one at a time.
enum SyncHalf: Sendable, Hashable {
    case upload
    case download
}

/// Runs uploads and downloads, one at a time: a second request while one runs joins it.
actor SyncEngine {
    let store: LocalStore
    let api: RemoteAPI
    let configuration: CairnConfiguration
    let status: StatusCenter
    /// What the engine tells the app's logger.
    let log: SyncLog
    private var running: (id: UUID, scope: SyncScope, task: Task<SyncSummary, any Error>)?
    /// The halves of the run in progress that ``cancel(_:)`` stopped; cleared when a run starts.
    private var cancelledHalves: Set<SyncHalf> = []
    /// The uploads the server refused in the run in progress, for ``CairnConfiguration/throwUploadFailures``.
    var refusedInRun: [JSONValue] = []
    /// The running push's progress (``beginUploadProgress()``).
    var uploadMeter: TransferMeter?
    /// The running pull's progress, by the collection pulling (``beginDownloadProgress(of:)``): one at a time, or up
    /// to ``CairnConfiguration/downloadConcurrency`` at once, shown summed.
    var downloadMeters: [String: TransferMeter] = [:]
    /// The client that owns this engine, for automatic sync tasks (weak: the client owns the engine).
    let owner = WeakClient()
    /// False once the server answered a request for several pages with one: it predates ``PageStream``.
    var serverStreamsPages = true
    /// The store file's sync lease, taken by every run (nil in memory): one process syncs at a time.
    let lease: SyncLease?

    init(store: LocalStore, api: RemoteAPI, configuration: CairnConfiguration, status: StatusCenter, lease: SyncLease? = nil) {
        self.store = store
        self.api = api
        self.configuration = configuration
        self.status = status
        self.log = api.log
        self.lease = lease
    }

    /// Runs `scope`, or joins the run in progress when it covers it.
    func run(_ scope: SyncScope) async throws -> SyncSummary {
        while let current = running {
            // Joining: the run belongs to whoever started it, so cancelling a joiner does not stop it.
            let result = await current.task.result
            // The run may have ended before its starter resumed: forget it here too.
            if running?.id == current.id { running = nil }
            let summary = try result.get()
            if current.scope == scope || current.scope == SyncScope(push: true, pull: true, collections: nil) { return summary }
        }
        let id = UUID()
        cancelledHalves = []
        let task = Task { try await self.perform(scope) }
        running = (id, scope, task)
        defer { if running?.id == id { running = nil } }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Stops one half of the run in progress for everyone waiting on it, at the next batch or page: what was
    /// committed stays. Returns false when no run is in progress.
    func cancel(_ half: SyncHalf) -> Bool {
        guard running != nil else { return false }
        cancelledHalves.insert(half)
        return true
    }

    func isCancelled(_ half: SyncHalf) -> Bool { cancelledHalves.contains(half) }

    /// Throws `cancelled` when ``cancel(_:)`` stopped `half` of this run.
    func stopIfCancelled(_ half: SyncHalf) throws {
        guard cancelledHalves.contains(half) else { return }
        throw CairnError(.cancelled, half == .upload ? "The upload was cancelled (cancelUpload)" : "The download was cancelled (cancelDownload)")
    }

    /// Waits for the run in progress, if any (sign-out).
    func waitForIdle() async {
        while let current = running {
            _ = await current.task.result
            if running?.id == current.id { running = nil }
        }
    }

    /// Stops the run in progress, if any (the lease was lost to another process).
    func cancelRunning() {
        running?.task.cancel()
    }

    /// Runs `scope` holding the store's sync lease: nothing is recorded when another process keeps it.
    private func perform(_ scope: SyncScope) async throws -> SyncSummary {
        if store.isReadOnly {
            throw CairnError(.storeReadOnly, "The local store is read-only (its file or folder cannot be written): it can be read, but not synced")
        }
        guard let lease else { return try await performHeld(scope) }
        do { try await lease.beginSync() } catch { throw CairnError(wrapping: error) }
        do {
            let summary = try await performHeld(scope)
            await lease.endSync()
            return summary
        } catch {
            await lease.endSync()
            throw error
        }
    }

    private func performHeld(_ scope: SyncScope) async throws -> SyncSummary {
        // One trip to the store's queue before the first request: the run's history entry and the schema's ETag.
        let (historyID, etag) = (try? await store.offPool { store in
            (try? store.history.begin(kind: scope.kind), try? store.meta(.schemaETag))
        }) ?? (nil, nil)
        refusedInRun = []
        let attempt = await status.begin(at: configuration.wallClock.now())
        await status.emit(.started)
        log.syncStarted(scope.kind)
        let started = ContinuousClock.now
        var summary = SyncSummary()
        // The schema check's round trip passes beside the run's first requests: nothing is uploaded before it answers
        // (when there is anything to upload) and no page is applied before it (``pull(_:onlyQueries:schemaCheck:into:)``).
        let schemaCheck = Task { try await self.refreshSchema(etag: etag) }
        defer { schemaCheck.cancel() }
        // What this run completes, remembered by the store with the run's last store work (``SyncFacts``).
        var facts = SyncFacts()
        do {
            let uploads = scope.push ? try await hasUploads() : false
            if !scope.pull || uploads { _ = try await schemaCheck.value }
            if scope.push {
                await status.update { $0.phase = .pushing }
                if scope.uploadGroups == nil { try await pushFileDeletions() }
                await beginUploadProgress()
                let pushStarted = ContinuousClock.now
                try await push(groups: scope.uploadGroups, into: &summary)
                try stopIfCancelled(.upload)
                facts.lastUpload = configuration.wallClock.now()
                facts.uploadRate = TransferEstimate(done: summary.pushed, total: nil, elapsed: ContinuousClock.now - pushStarted).perSecond
                await status.update { [facts] in facts.apply(to: &$0) }
            }
            if scope.pull {
                await status.update { $0.phase = .pulling }
                let pullStarted = ContinuousClock.now
                try await pull(scope.collections, onlyQueries: scope.onlyQueries, schemaCheck: schemaCheck, into: &summary)
                facts.lastDownload = configuration.wallClock.now()
                facts.downloadRate = TransferEstimate(done: summary.pulled, total: nil, elapsed: ContinuousClock.now - pullStarted).perSecond
                await status.update { [facts] in facts.apply(to: &$0) }
            }
            if scope.pull, scope.collections == nil, let client = owner.client {
                for task in configuration.automaticTasks { try await task.run(client) }
            }
            if configuration.throwUploadFailures, !refusedInRun.isEmpty {
                throw CairnError(
                    .uploadRefused, "The server refused \(refusedInRun.count) upload(s); they wait in failedOperations()",
                    details: ["operations": .array(refusedInRun)])
            }
            let counts = try? await store.offPool { [summary, facts] store in
                try? store.history.end(historyID ?? 0, summary: summary, error: nil)
                try? store.writeBookkeeping { db in try facts.save(db, store.metaTable) }
                // A sync that moved many records folds the WAL into the database; a small one leaves it to SQLite's
                // automatic checkpoint rather than wait for the disk twice more.
                if summary.pulled + summary.pushed >= 1000 { store.checkpoint() }
                return try store.uploads.counts()
            }
            await endProgress()
            await status.end(attempt, at: configuration.wallClock.now(), error: nil, Self.apply(counts))
            await status.emit(.completed(summary))
            log.syncCompleted(scope.kind, summary, after: ContinuousClock.now - started)
            return summary
        } catch {
            let cairnError = CairnError(wrapping: error)
            let body = ErrorBody(code: cairnError.code, message: cairnError.message, details: cairnError.details)
            let counts = try? await store.offPool { [summary, facts] store in
                try? store.history.end(historyID ?? 0, summary: summary, error: "\(cairnError.code): \(cairnError.message)")
                if facts != SyncFacts() { try? store.writeBookkeeping { db in try facts.save(db, store.metaTable) } }
                return try store.uploads.counts()
            }
            await endProgress()
            await status.end(attempt, at: configuration.wallClock.now(), error: body, Self.apply(counts))
            await status.emit(.failed(body))
            log.syncFailed(scope.kind, cairnError, after: ContinuousClock.now - started)
            throw cairnError
        }
    }

    /// A status change that puts the store's queue counts (read with the run's last store work) into the status.
    private static func apply(_ counts: (pending: Int, failed: Int)?) -> @Sendable (inout SyncStatus) -> Void {
        return {
            $0.pendingUploads = counts?.pending ?? $0.pendingUploads
            $0.failedUploads = counts?.failed ?? $0.failedUploads
        }
    }

    /// Fetches the schema when it changed (ETag) and migrates the local tables.
    ///
    /// - Returns: true when the server sent a schema (not `304`): what to pull may have changed.
    @discardableResult
    func refreshSchema() async throws -> Bool {
        try await refreshSchema(etag: try await store.offPool { try $0.meta(.schemaETag) })
    }

    /// ``refreshSchema()`` with the stored ETag already read.
    @discardableResult
    func refreshSchema(etag: String?) async throws -> Bool {
        guard let (schema, newETag) = try await api.schema(etag: store.schema == nil ? nil : etag) else { return false }
        let changed = try await store.offPool { try $0.apply(schema: schema, etag: newETag) }
        if !changed.isEmpty {
            await status.update { $0.changedCollections = changed }
            await status.emit(.schemaChanged(collections: changed))
            log.schemaChanged(changed)
        }
        return true
    }

    /// Whether a push has anything to send: queued changes, action calls or file deletions.
    private func hasUploads() async throws -> Bool {
        try await store.offPool { try $0.uploads.counts().pending > 0 || !(try $0.files.fileDeletions(in: [.queued]).isEmpty) }
    }
}
