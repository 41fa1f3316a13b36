import CairnProtocol
import Foundation
import Synchronization

extension CairnClient {
    /// Keeps the store in sync by itself until the task running it is cancelled (or the client signs out): pushes
    /// shortly after local writes, pulls the collections the server's live notices name, syncs everything on
    /// ``CairnConfiguration/scheduling``'s interval, backs off after failures (retrying failed uploads without waiting
    /// for a new write) and reconnects the live connection with backoff. While nothing is due it does nothing but hold
    /// the live connection.
    ///
    /// ```swift
    /// let syncing = Task { await client.run() }
    /// // ... the app writes; the scheduler uploads and downloads ...
    /// syncing.cancel()   // stops everything cleanly
    /// ```
    ///
    /// The decisions are ``SyncScheduler``'s, a pure state machine; this method only carries them out. One runs at a
    /// time: a second call returns at once.
    public func run() async {
        guard (try? checkOpen()) != nil else { return }
        let (events, input) = AsyncStream<SyncScheduler.Event?>.makeStream()
        guard schedulerInput.withLock({ current in
            guard current == nil else { return false }
            current = input
            return true
        }) else { return }
        defer { schedulerInput.withLock { $0 = nil } }

        let elapsed = Self.stopwatch(configuration.clock)
        schedulerStopwatch.withLock { $0 = elapsed }
        defer { schedulerStopwatch.withLock { $0 = nil } }
        var machine = SyncScheduler(policy: configuration.scheduling, retry: configuration.retry)
        machine.handle(.started, at: elapsed())
        // A store file may be shared with other processes: sync only while holding its lease (the lease's keeper
        // reports `.leaseTaken` as soon as it is this client's), and notice the others' commits meanwhile.
        let watching = shared?.watcher.hold()
        defer { watching?.release() }
        if let lease = shared?.lease, await !lease.stand() { machine.handle(.leaseHeldElsewhere, at: elapsed()) }
        await withTaskGroup(of: Void.self) { group in
            var timer: Task<Void, Never>?
            defer { timer?.cancel() }
            var liveTask: Task<Void, Never>?
            defer { liveTask?.cancel() }
            var iterator = events.makeAsyncIterator()
            while !Task.isCancelled {
                let now = elapsed()
                for action in machine.actions(at: now) {
                    switch action {
                    case .sync(let push, let pull):
                        group.addTask { [self] in input.yield(.syncEnded(succeeded: await self.scheduledSync(push: push, pull: pull))) }
                    case .openLiveConnection:
                        liveTask = Task { [self] in await self.listen(input) }
                    case .closeLiveConnection:
                        liveTask?.cancel()
                        liveTask = nil
                    }
                }
                let snapshot = SchedulerStatus(machine, now: now, wallClock: configuration.wallClock.now())
                await statusCenter.update { $0.scheduler = snapshot }
                timer?.cancel()
                if let wake = machine.nextWake {
                    let clock = configuration.clock
                    timer = Task {
                        try? await clock.sleep(for: max(wake - now, .zero))
                        if !Task.isCancelled { input.yield(nil) }
                    }
                }
                // `nil` from the timer: time alone made something due. The end of the stream: sign-out.
                guard let next = await withTaskCancellationHandler(operation: { await iterator.next() }, onCancel: { input.finish() }) else { break }
                if let event = next {
                    machine.handle(event, at: elapsed())
                    if case .syncEnded(false) = event, let retryAt = machine.retryAt {
                        api.log.syncRetryScheduled(failures: machine.failures, in: retryAt - elapsed())
                    }
                }
            }
            group.cancelAll()
        }
        await shared?.lease.sit()
        await statusCenter.update { $0.scheduler = SchedulerStatus() }
    }

    /// Tells the scheduler that the network is back: a sync that failed is retried now, and the live connection
    /// reopens. Apps call it from their reachability monitor.
    public func networkDidBecomeAvailable() {
        _ = schedulerInput.withLock { $0?.yield(.connectivityRestored) }
    }

    /// Tells the client whether the network is metered: with ``CairnConfiguration/filesOnlyOnUnmeteredNetworks``,
    /// file uploads wait while it is. Also counts as the network coming back.
    public func networkDidChange(metered: Bool) {
        let uploader = fileUploader
        uploader.setMetered(metered)
        if !metered { background.start { await uploader.kick() } }
        networkDidBecomeAvailable()
    }

    /// Tells a running scheduler that another process (such as `cairn put`) wrote to the store file: its changes are
    /// pushed as if this client had made them.
    public func storeDidChangeExternally() { noteLocalWrite() }

    /// Tells a running scheduler about a local write.
    func noteLocalWrite() {
        _ = schedulerInput.withLock { $0?.yield(.localWrite) }
    }

    /// Ends a running scheduler (at sign-out).
    func stopScheduler() {
        schedulerInput.withLock { $0?.finish() }
    }

    /// One sync the scheduler decided on; true when it succeeded.
    private func scheduledSync(push: Bool, pull: Set<String>?) async -> Bool {
        do {
            guard let pull else {
                if push { try await sync() } else { try await self.pull() }
                return true
            }
            if push { try await self.push() }
            // A notice pulls what automatic downloads pull: a group of phase 0 or below waits for pull(group:).
            let targets = try PullPlan(configuration: configuration, store: store).automatic().filter { pull.contains($0.collection) }
            if !targets.isEmpty { _ = try await self.pull(targets: targets) }
            return true
        } catch {
            return false
        }
    }

    /// Holds the live-notice connection: reports it open, each notice of a collection the device holds, and its end.
    private func listen(_ input: AsyncStream<SyncScheduler.Event?>.Continuation) async {
        do {
            let chunks = try await api.events()
            api.log.liveConnection(open: true)
            input.yield(.liveOpened)
            await statusCenter.update { $0.scheduler.liveConnected = true }
            var reader = ServerSentEvents()
            for try await chunk in chunks {
                for event in reader.feed(chunk) {
                    if let payload = event.data, let notice = try? CairnJSON.decode(ChangeNotice.self, from: Array(payload.utf8)),
                        store.schema?.collection(named: notice.collection) != nil
                    {
                        input.yield(.liveNotice(collection: notice.collection))
                    }
                }
            }
            api.log.liveConnection(open: false)
        } catch {
            api.log.liveConnection(open: false, cause: error)
        }
        await statusCenter.update { $0.scheduler.liveConnected = false }
        if !Task.isCancelled { input.yield(.liveClosed) }
    }

    /// A function that reads how long ago it was made, on `clock`.
    private static func stopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }
}
