import Foundation

/// What the scheduler of ``CairnClient/run()`` is doing, in ``SyncStatus/scheduler``.
public struct SchedulerStatus: Sendable, Hashable {
    /// The scheduler's state.
    public enum Phase: String, Sendable, Hashable, Codable {
        /// ``CairnClient/run()`` is not running.
        case notRunning = "not-running"
        /// Nothing to do: only the live connection is held.
        case idle
        /// Work is due soon (a push after local writes, a pull after a notice).
        case waiting
        /// A sync is under way.
        case syncing
        /// The last sync failed; it is tried again with backoff.
        case retrying
        /// Another process that shares the store file syncs it (it holds the sync lease, and uploads this process's
        /// changes too); this scheduler takes over when that process stops. See <doc:AppExtensions>.
        case otherProcess = "other-process"
    }

    /// The state.
    public var phase: Phase = .notRunning
    /// True while the live-notice connection is open.
    public var liveConnected = false
    /// When time alone makes the next sync or reconnection due (`nil`: only an event will).
    public var nextWake: Date?
    /// What it will do at ``nextWake``: "push local changes", "retry the failed sync", "periodic full sync" or
    /// "reopen the live connection".
    public var nextAction: String?
    /// Failed syncs in a row.
    public var failures = 0
    /// ``nextWake`` on the scheduler's own clock (time since ``CairnClient/run()`` started), from which the date is
    /// worked out again whenever the status is read: a device clock changed meanwhile moves the date with it.
    var wakeDeadline: Duration?

    /// Not running.
    public init() {}

    init(_ machine: SyncScheduler, now: Duration, wallClock: Date) {
        switch machine.phase {
        case .idle: phase = .idle
        case .waiting: phase = .waiting
        case .syncing: phase = .syncing
        case .retrying: phase = .retrying
        case .standby: phase = .otherProcess
        }
        liveConnected = machine.live == .open
        failures = machine.failures
        nextAction = machine.nextActionDescription
        wakeDeadline = machine.nextWake
        date(at: now, wallClock: wallClock)
    }

    /// Sets ``nextWake`` from ``wakeDeadline``: `wallClock` plus what is left of the wait at `now` on the scheduler's
    /// clock, never in the past.
    mutating func date(at now: Duration, wallClock: Date) {
        nextWake = wakeDeadline.map { wake in
            let seconds = Double((wake - now).components.seconds) + Double((wake - now).components.attoseconds) / 1e18
            return wallClock.addingTimeInterval(max(seconds, 0))
        }
    }
}
