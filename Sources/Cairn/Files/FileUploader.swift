import CairnProtocol
import Foundation
import Synchronization

/// Runs queued file uploads beside record sync, never in front of it: at most ``CairnConfiguration/fileUploadConcurrency``
/// at once, each through the three steps, streaming from its local copy and resuming from the server's offset
/// after any interruption. A job that fails for network reasons is tried again later with the retry policy's
/// backoff; one the server refuses (or that keeps failing) moves to the failed list and never blocks anything.
/// Every upload, and every wake after a backoff, runs in the client's ``BackgroundWork``, so closing the client
/// ends them.
///
/// On a store file shared by processes, an upload runs under the store's sync lease like a sync: uploads queued by
/// any process are in one table, so the process that syncs sends them all, and no file is sent by two processes.
actor FileUploader {
    let store: LocalStore
    let api: RemoteAPI
    let folder: FileFolder
    let configuration: CairnConfiguration
    let status: StatusCenter
    let cache: FileCache
    let work: BackgroundWork
    /// The store's sync lease, when the store is a file other processes may share.
    let lease: SyncLease?
    /// Until when another process's scheduler keeps the lease (and sends this process's uploads): nothing starts here.
    private var otherProcessSyncsUntil: ContinuousClock.Instant?
    /// The local ids of the uploads under way.
    private var running: Set<String> = []
    /// The uploads the status shows.
    private let progress: TransferProgress
    /// The attempts under way, by local id, to cancel one whose upload was discarded.
    private var attempts: [String: Task<Void, Never>] = [:]
    /// Callers of ``drain()`` waiting for an upload to end.
    private var waitingForAnEnd: [CheckedContinuation<Void, Never>] = []
    /// Counts the wakes asked for: only the latest one kicks.
    private var wakes = 0
    private var stopped = false
    /// The most bytes one request sends from a sealed file: a transport that cannot stream through decryption
    /// (URLSession's body streams) holds one slice in memory.
    static let sealedSliceBytes: Int64 = 16 << 20
    /// True while the network is metered (the app says so, from its platform's path monitor): set at once, in the
    /// order the app says it, not when the actor gets to it.
    private let metered = Mutex(false)

    init(
        store: LocalStore, api: RemoteAPI, folder: FileFolder, configuration: CairnConfiguration, status: StatusCenter, cache: FileCache,
        work: BackgroundWork, lease: SyncLease? = nil
    ) {
        self.lease = lease
        self.store = store
        self.api = api
        self.folder = folder
        self.configuration = configuration
        self.status = status
        self.cache = cache
        self.work = work
        progress = TransferProgress(status: status)
    }

    /// Starts the jobs whose turn has come, up to the concurrency limit.
    func kick() {
        guard !stopped, !(metered.withLock { $0 } && configuration.filesOnlyOnUnmeteredNetworks) else { return }
        if let until = otherProcessSyncsUntil, ContinuousClock.now < until { return }
        let limit = max(1, configuration.fileUploadConcurrency)
        guard running.count < limit, let ready = try? store.files.readyFileUploads(now: configuration.wallClock.now(), retry: configuration.retry) else { return }
        for job in ready where !running.contains(job.localID) && running.count < limit {
            guard work.start({ await self.run(job) }) else { return }
            running.insert(job.localID)
            progress.begin(job.localID)
        }
    }

    /// Notes whether the network is metered; with ``CairnConfiguration/filesOnlyOnUnmeteredNetworks`` uploads pause
    /// on a metered one. The caller kicks the uploader when it is not.
    nonisolated func setMetered(_ value: Bool) {
        metered.withLock { $0 = value }
    }

    /// Waits until no upload runs and none is ready, waiting through short backoffs of jobs that failed fewer times
    /// than the retry policy allows in place (tests, the command line). Jobs waiting for their record, or for the
    /// network after repeated failures, stay queued.
    func drain() async {
        while !stopped {
            kick()
            if !running.isEmpty {
                await withCheckedContinuation { waitingForAnEnd.append($0) }
                continue
            }
            let now = configuration.wallClock.now()
            guard let waiting = try? store.files.fileUploads(in: [.queued]),
                let soonest = waiting.filter({ $0.attempts > 0 && $0.attempts < configuration.retry.maximumAttempts }).map(\.nextAttemptAt).min()
            else { return }
            let delay = configuration.retry.isDue(retryAt: soonest, now: now) ? 0 : soonest.timeIntervalSince(now)
            guard delay < 5 else { return }
            if delay > 0 { try? await configuration.clock.sleep(for: .milliseconds(Int(delay * 1000) + 1)) }
        }
    }

    /// Starts nothing more (uploads resume on the next start); closing the client's ``BackgroundWork`` cancels the
    /// uploads under way.
    func stop() {
        stopped = true
        wakes += 1
    }

    /// This store took the sync lease: uploads start here again, those of other processes too.
    func leaseTaken() {
        otherProcessSyncsUntil = nil
        kick()
    }

    private func run(_ job: FileUploadJob) async {
        if let lease {
            do {
                try await lease.beginSync()
            } catch {
                // Another process syncs this store and sends the queued files, this one too: look again when its
                // lease would lapse.
                let wait = configuration.sharedStore.leaseDuration
                otherProcessSyncsUntil = ContinuousClock.now + wait
                scheduleWake(after: wait)
                await ended(job)
                return
            }
        }
        // Its own task, so that discarding the upload can stop it; closing the client cancels it through this one.
        let attempt = Task { await self.attempt(job) }
        attempts[job.localID] = attempt
        await withTaskCancellationHandler { await attempt.value } onCancel: { attempt.cancel() }
        attempts[job.localID] = nil
        await lease?.endSync()
        await ended(job)
    }

    /// Stops the attempt of an upload that was discarded, if one is under way: nothing more of it is sent.
    func cancel(_ localID: String) {
        attempts[localID]?.cancel()
    }

    /// One try of a job; a failure is noted on it (retried later, or moved to the failed list).
    private func attempt(_ job: FileUploadJob) async {
        // Discarded while it waited for its turn: nothing to send.
        guard let current = try? store.files.fileUpload(localID: job.localID), current.state == .queued else { return }
        do {
            try await upload(job)
        } catch {
            let failure = CairnError(wrapping: error)
            if failure.code != .cancelled, !Task.isCancelled {
                let body = ErrorBody(code: failure.code, message: failure.message, details: failure.details)
                // Offline is normal: a network failure never moves a job to the failed list; anything else counts.
                let offline = failure.code == .networkUnavailable || failure.code == .timedOut
                if failure.isRetryable, offline || job.attempts + 1 < configuration.maximumFileAttempts {
                    let delay = configuration.retry.delay(beforeAttempt: job.attempts + 2)
                    try? store.files.noteFileAttempt(localID: job.localID, error: body, retryAt: configuration.wallClock.now() + delay.timeInterval)
                    scheduleWake(after: delay)
                } else {
                    try? store.files.failFileUpload(localID: job.localID, error: body)
                }
            }
        }
    }

    /// A job is no longer under way here: waiters hear it, the counts are refreshed, and the next job may start.
    private func ended(_ job: FileUploadJob) async {
        // Off the status before the job stops counting as under way: whoever hears of the end sees it gone.
        await progress.end(job.localID)
        running.remove(job.localID)
        for waiter in waitingForAnEnd { waiter.resume() }
        waitingForAnEnd.removeAll()
        await refreshCounts()
        kick()
    }

    /// Kicks again once a backoff has passed (unless a later wake was asked for meanwhile).
    private func scheduleWake(after delay: Duration) {
        wakes += 1
        let (wake, clock) = (wakes, configuration.clock)
        work.start {
            guard (try? await clock.sleep(for: delay)) != nil else { return }
            await self.kick(ifLatestWake: wake)
        }
    }

    private func kick(ifLatestWake wake: Int) {
        if wake == wakes { kick() }
    }

    func refreshCounts() async {
        guard let counts = try? store.files.fileUploadCounts() else { return }
        await status.update {
            $0.pendingFiles = counts.pending
            $0.failedFiles = counts.failed
        }
    }

    /// The three steps, from wherever the job stands.
    private func upload(_ job: FileUploadJob) async throws {
        let source = folder.url(job.path)
        var job = job
        if job.sha256.isEmpty {
            // Hashed here, not when queued: queuing a large file returns at once.
            job.sha256 = try FileCache.sha256(try folder.reader(source))
            try store.files.setFileSHA256(localID: job.localID, sha256: job.sha256)
        }
        var serverID = job.serverID
        var restarts = 0
        while true {
            try Task.checkCancellation()
            if serverID == nil {
                let created = try await api.createFile(NewFileRequest(
                    name: job.name, contentType: job.contentType, size: job.size, sha256: job.sha256, tags: job.tags, public: job.isPublic,
                    attachTo: job.attachTo, source: job.source, permissions: job.permissions == .project ? nil : job.permissions))
                try store.files.setFileServerID(localID: job.localID, serverID: created.id)
                serverID = created.id
            }
            guard let id = serverID else { continue }
            do {
                try await sendBytes(job, fileID: id, source: source)
                let done = try await api.completeFile(fileID: id)
                try store.files.completeFileUpload(localID: job.localID, attachedVersion: done.attachedVersion)
                await cache.adoptUpload(job, serverID: id)
                return
            } catch let error as CairnError where error.code == .notFound && error.httpStatus == 404 && error.details?["id"] == nil {
                // The slot is gone (it expired and was swept): start a new one.
                guard restarts < 3 else { throw error }
                restarts += 1
                try store.files.setFileServerID(localID: job.localID, serverID: nil)
                serverID = nil
            } catch let error as CairnError where error.code == .checksumMismatch {
                // The server discarded the bytes: send them again, once.
                guard restarts < 1 else { throw error }
                restarts += 1
            }
        }
    }

    /// Sends what the server lacks, asking for its offset after every interruption; returns once it has every byte.
    private func sendBytes(_ job: FileUploadJob, fileID: String, source: URL) async throws {
        var stalls = 0
        while true {
            try Task.checkCancellation()
            let offset = try await api.uploadOffset(fileID: fileID)
            await report(job, bytes: offset)
            if offset >= job.size { return }
            var slice = TransportFileSlice(url: source, offset: offset, length: job.size - offset)
            // In an encrypted store the copy must be sealed; a decrypted one may still hold copies sealed before.
            if let sealing = folder.writeSealing ?? (SealedFile.isSealed(source) ? folder.readSealing : nil) {
                slice.sealing = sealing
                slice.length = min(slice.length, Self.sealedSliceBytes)
            }
            let reporter = ProgressReporter { [work] sent in
                work.start { await self.report(job, bytes: offset + sent) }
            }
            do {
                _ = try await api.uploadChunk(
                    fileID: fileID, slice: slice, total: job.size, timeout: configuration.fileTransferTimeout, progress: reporter.report)
                stalls = 0
            } catch let error as CairnError where error.isRetryable || error.code == .offsetMismatch {
                // Broken off, or another request still held the file: ask where it stands and go on from there, a
                // few times without progress before the job backs off.
                let now = try? await api.uploadOffset(fileID: fileID)
                if let now, now > offset { stalls = 0 } else { stalls += 1 }
                guard stalls < 10 else { throw error }
                if error.code == .offsetMismatch || now == nil { try await configuration.clock.sleep(for: .milliseconds(200)) }
            }
        }
    }

    private func report(_ job: FileUploadJob, bytes: Int64) async {
        await progress.report(job.localID, FileTransfer(direction: .upload, name: job.name, bytes: bytes, totalBytes: job.size))
    }
}

/// Reports transfer progress at most about every 1% (and at the end), so a large file does not flood the status stream.
final class ProgressReporter: Sendable {
    private let last = Mutex<Int64>(-1)
    private let sink: @Sendable (Int64) -> Void

    init(_ sink: @escaping @Sendable (Int64) -> Void) { self.sink = sink }

    var report: @Sendable (Int64) -> Void {
        { [self] bytes in
            let due = last.withLock { last -> Bool in
                guard last < 0 || bytes - last >= 1 << 20 else { return false }
                last = bytes
                return true
            }
            if due { sink(bytes) }
        }
    }
}
