import CairnProtocol
import Foundation
import GRDB
import Synchronization

/// This open store's side of the sync lease (``SyncLeaseTable``), so that of the processes sharing a store file only
/// one syncs at a time. A sync takes it first (``beginSync()``) and gives it back when it ends, unless a running
/// scheduler stands on it (``stand()``): then it is kept, renewed at a third of its duration, until the scheduler
/// stops, the client closes or the app is suspended. A scheduler that finds it taken waits on standby and takes it
/// over when it is given back, when it lapses, or at once when its holder's process no longer runs.
///
/// Every change of the lease runs on one serial queue, so this store's own takes, renewals and releases never
/// cross. `onChange` hears when the lease becomes this store's, and when it is lost to another process.
///
/// ```swift
/// try await lease.beginSync()   // throws sync_in_another_process when another process keeps syncing
/// defer { Task { await lease.endSync() } }
/// ```
final class SyncLease: Sendable {
    /// This store's holder id: the process id and a random part.
    let id = "\(getpid())-\(UInt64.random(in: 0...UInt64.max))"

    private struct State {
        var held = false
        var standing = false
        var syncs = 0
        var suspended = false
        var closed = false
        var renewedAt: Date?
        var keeper: Task<Void, Never>?
        var onChange: (@Sendable (_ held: Bool) -> Void)?
    }

    private let writer: any DatabaseWriter
    private let table: SyncLeaseTable
    private let policy: SharedStorePolicy
    private let wallClock: any WallClock
    /// The clock its waits run on (a sync waiting for another's lease, the keeper's ticks): the client's, so tests
    /// drive them without sleeping.
    private let clock: any Clock<Duration>
    private let queue = BlockingQueue(label: "cairn.lease")
    private let state = Mutex(State())

    init(
        writer: any DatabaseWriter, table: SyncLeaseTable, policy: SharedStorePolicy, wallClock: any WallClock,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.writer = writer
        self.table = table
        self.policy = policy
        self.wallClock = wallClock
        self.clock = clock
    }

    /// Called when the lease becomes this store's (true) or is lost to another process (false).
    func onChange(_ handler: (@Sendable (_ held: Bool) -> Void)?) { state.withLock { $0.onChange = handler } }

    /// True while this store holds the lease.
    var isHeld: Bool { state.withLock { $0.held } }

    // MARK: Syncs

    /// Takes the lease for one sync (or renews it when this store has it). While another process holds it for a sync
    /// of its own, waits up to ``SharedStorePolicy/leaseWait``; when a scheduler there stands on it, or the wait ends,
    /// throws `sync_in_another_process`.
    func beginSync() async throws {
        let elapsed = SyncLease.stopwatch(self.clock)
        while true {
            guard let other = try await queue.run({ try self.take(forSync: true) }) else { return }
            if other.standing || elapsed() >= policy.leaseWait {
                throw CairnError(
                    .syncInAnotherProcess,
                    other.standing
                        ? "Another process (pid \(other.pid)) keeps this store in sync; it uploads this process's changes too"
                        : "Another process (pid \(other.pid)) is syncing this store; try again when it is done",
                    isRetryable: true)
            }
            try await clock.sleep(for: .milliseconds(100))
        }
    }

    /// A function that reads how long ago it was made, on `clock`.
    private static func stopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// Ends a sync begun with ``beginSync()``: gives the lease back unless a scheduler stands on it or another sync
    /// runs.
    func endSync() async {
        _ = try? await queue.run {
            let release = self.state.withLock { state in
                state.syncs -= 1
                return state.syncs == 0 && !state.standing && state.held
            }
            if release { self.release() }
        }
    }

    // MARK: The scheduler

    /// A running scheduler wants the lease kept: it is taken now if it can be, else as soon as it can be, and kept
    /// until ``sit()``. Returns whether this store holds it now.
    func stand() async -> Bool {
        let handler = state.withLock { state in
            state.standing = true
            startKeeper(&state)
            return state.held ? state.onChange : nil
        }
        // Held already (for a sync under way): the scheduler may start at once.
        handler?(true)
        _ = try? await queue.run { if !self.isHeld { _ = try? self.take(forSync: false) } }
        return isHeld
    }

    /// The scheduler stopped: the lease is given back unless a sync runs.
    func sit() async {
        _ = try? await queue.run {
            let release = self.state.withLock { state in
                state.standing = false
                return state.syncs == 0 && state.held
            }
            if release { self.release() }
        }
    }

    // MARK: Suspension and close

    /// The app is about to be suspended: gives the lease back (waiting at most half a second for the store's writer,
    /// else it lapses by itself) and takes none until ``resume()``.
    func suspend() {
        state.withLock { $0.suspended = true }
        let done = DispatchSemaphore(value: 0)
        queue.start {
            if self.isHeld {
                self.release()
                self.state.withLock { $0.onChange }?(false)
            }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 0.5)
    }

    /// The app is back: a standing scheduler takes the lease again.
    func resume() {
        state.withLock { state in
            state.suspended = false
            startKeeper(&state)
        }
    }

    /// Gives the lease back for good (the client closes).
    func close() async {
        _ = try? await queue.run {
            let held = self.state.withLock { state in
                state.closed = true
                state.keeper?.cancel()
                state.keeper = nil
                return state.held
            }
            if held { self.release() }
        }
    }

    // MARK: Changes (on `queue` only)

    /// Takes or renews the lease; returns the other holder when it is not free.
    private func take(forSync: Bool) throws -> SyncLeaseTable.Holder? {
        let (standing, refused) = state.withLock { ($0.standing, $0.closed || $0.suspended) }
        if refused { throw CairnError(.cancelled, "The client is closed or the app is suspended: no sync starts now", isRetryable: true) }
        let now = wallClock.now()
        let claim = SyncLeaseTable.Holder(
            id: id, pid: getpid(), host: Self.host, standing: standing, expiresAt: now.addingTimeInterval(policy.leaseDuration.timeInterval))
        if let other = try writer.writeBookkeeping({ db in try table.take(db, claim, now: now, isRunning: Self.isRunning) }) { return other }
        let (notify, handler) = state.withLock { state in
            defer {
                state.held = true
                state.renewedAt = now
                if forSync { state.syncs += 1 }
                startKeeper(&state)
            }
            return (!state.held, state.onChange)
        }
        if notify { handler?(true) }
        return nil
    }

    /// Renews the lease when a third of its duration passed; notices when another process took it meanwhile.
    private func renewIfDue() {
        let now = wallClock.now()
        let (due, standing) = state.withLock { state in
            // A clock set back since the last renewal (a negative interval) renews now, so the lease's expiry follows it.
            (state.held && (state.renewedAt.map { now.timeIntervalSince($0) >= policy.leaseDuration.timeInterval / 3 || now < $0 } ?? true), state.standing)
        }
        guard due else { return }
        let expiry = now.addingTimeInterval(policy.leaseDuration.timeInterval)
        // A failed write (the database busy past its timeout) is tried again at the next tick.
        guard let renewed = try? writer.writeBookkeeping({ db in try table.renew(db, holder: id, standing: standing, until: expiry) }) else { return }
        let handler = state.withLock { state -> (@Sendable (Bool) -> Void)? in
            if renewed { state.renewedAt = now; return nil }
            guard state.held else { return nil }
            state.held = false
            return state.onChange
        }
        handler?(false)
    }

    /// Gives the lease back.
    private func release() {
        state.withLock { $0.held = false }
        _ = try? writer.writeBookkeeping { db in try table.release(db, holder: id) }
    }

    /// Starts the task that renews the held lease and retries a standing one, unless it runs. It ends when there is
    /// nothing left to keep.
    private func startKeeper(_ state: inout State) {
        guard state.keeper == nil, !state.closed, state.held || state.standing else { return }
        let tick = min(Duration.seconds(1), policy.leaseDuration / 3)
        let clock = self.clock
        state.keeper = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                let keeping = self.state.withLock { state in
                    let keeping = !state.closed && (state.held || state.standing)
                    if !keeping { state.keeper = nil }
                    return keeping
                }
                guard keeping else { return }
                _ = try? await self.queue.run { self.keep() }
                try? await clock.sleep(for: tick)
            }
        }
    }

    /// One tick of the keeper: renew the held lease, or try to take the one a standing scheduler waits for.
    private func keep() {
        let (held, wanted) = state.withLock { ($0.held, $0.standing && !$0.suspended && !$0.closed) }
        if held { renewIfDue() } else if wanted { _ = try? take(forSync: false) }
    }

    /// Tries a standing take now (another process just committed: perhaps it gave the lease back).
    func retryStanding() {
        guard state.withLock({ !$0.held && $0.standing && !$0.suspended && !$0.closed }) else { return }
        queue.start { if !self.isHeld { _ = try? self.take(forSync: false) } }
    }

    // MARK: Processes

    /// True unless no process `pid` exists on this host (`kill(pid, 0)` says ESRCH; EPERM means it runs).
    static func isRunning(_ pid: Int32) -> Bool { kill(pid, 0) == 0 || errno != ESRCH }

    /// This host's name, which tells whether a holder's process id can be checked here.
    static let host: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }()
}
