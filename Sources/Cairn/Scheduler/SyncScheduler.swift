import Foundation

/// When the scheduler of ``CairnClient/run()`` syncs by itself.
///
/// ```swift
/// configuration.scheduling = SchedulingPolicy(pushDelay: .seconds(1), interval: .seconds(900))
/// ```
public struct SchedulingPolicy: Sendable, Equatable {
    /// How long after a local write its push starts (writes meanwhile join it). Default 1 s.
    public var pushDelay: Duration
    /// A full sync (push, then pull every collection) this long after the last one ended; `nil` for none. Default
    /// 15 minutes: live notices bring changes sooner, this catches what they miss.
    public var interval: Duration?
    /// Whether to hold the server's live-notice connection open, and pull the collections it names.
    public var liveUpdates: Bool

    /// A policy; every default is documented on its property.
    public init(pushDelay: Duration = .seconds(1), interval: Duration? = .seconds(900), liveUpdates: Bool = true) {
        self.pushDelay = pushDelay
        self.interval = interval
        self.liveUpdates = liveUpdates
    }
}

/// The scheduler's decisions as a pure state machine: events go in (``handle(_:at:)``), actions come out
/// (``actions(at:)``), and ``nextWake`` says when time alone will make an action due. Time is a `Duration` since the
/// scheduler started, read from the client's clock, so tests drive it step by step without sleeping.
///
/// ```swift
/// var scheduler = SyncScheduler(policy: SchedulingPolicy(), retry: RetryPolicy())
/// scheduler.handle(.started, at: .zero)
/// scheduler.actions(at: .zero)   // [.sync(push: true, pull: nil), .openLiveConnection]
/// ```
struct SyncScheduler: Sendable {
    /// Something that happened.
    enum Event: Sendable, Equatable {
        /// ``CairnClient/run()`` started: everything is due once.
        case started
        /// The app wrote locally.
        case localWrite
        /// The live connection named a changed collection.
        case liveNotice(collection: String)
        /// The live connection is open.
        case liveOpened
        /// The live connection closed or could not open.
        case liveClosed
        /// The network is back (from the platform, or ``CairnClient/networkDidBecomeAvailable()``).
        case connectivityRestored
        /// The sync started by the last ``Action/sync(push:pull:)`` ended.
        case syncEnded(succeeded: Bool)
        /// Another process sharing the store file holds its sync lease: stand by.
        case leaseHeldElsewhere
        /// The sync lease is this client's (again): everything is due once, as at the start.
        case leaseTaken
    }

    /// Something to do now.
    enum Action: Sendable, Equatable {
        /// Push if `push`, then pull `pull` (`nil`: every collection).
        case sync(push: Bool, pull: Set<String>?)
        /// Open the live-notice connection.
        case openLiveConnection
        /// Close the live-notice connection (the process that syncs holds its own).
        case closeLiveConnection
    }

    /// What the scheduler is doing, for diagnostics.
    enum Phase: String, Sendable {
        case idle, waiting, syncing, retrying
        /// Another process syncs the store.
        case standby
    }

    let policy: SchedulingPolicy
    let retry: RetryPolicy
    /// The random part of backoff delays (a fixed value in tests).
    var jitterUnit: @Sendable () -> Double = { Double.random(in: 0...1) }

    // Work waiting.
    private(set) var pushDueAt: Duration?
    private(set) var pullAll = false
    private(set) var pullCollections: Set<String> = []
    private(set) var periodicDueAt: Duration?
    // The sync in flight, kept so that a failure puts its work back.
    private(set) var inFlight: Action?
    // Backoff after failed syncs.
    private(set) var failures = 0
    private(set) var retryAt: Duration?
    // The live connection.
    enum Live: String, Sendable { case closed, opening, open }
    private(set) var live: Live = .closed
    private(set) var liveFailures = 0
    private(set) var liveRetryAt: Duration?
    // Another process holds the store's sync lease: nothing is done until it is this client's.
    private(set) var standby = false

    init(policy: SchedulingPolicy, retry: RetryPolicy) {
        self.policy = policy
        self.retry = retry
    }

    /// Takes in an event that happened at `now`.
    mutating func handle(_ event: Event, at now: Duration) {
        switch event {
        case .started:
            pushDueAt = now
            pullAll = true
        case .localWrite:
            if pushDueAt == nil { pushDueAt = now + policy.pushDelay }
        case .liveNotice(let collection):
            pullCollections.insert(collection)
        case .liveOpened:
            live = .open
            liveFailures = 0
            liveRetryAt = nil
            // Changes made while nobody listened: one pull catches up.
            pullAll = true
        case .liveClosed:
            live = .closed
            liveFailures += 1
            liveRetryAt = now + retry.delay(beforeAttempt: liveFailures + 1, unit: jitterUnit())
        case .connectivityRestored:
            if failures > 0 { retryAt = now }
            if live == .closed { liveRetryAt = now }
        case .leaseHeldElsewhere:
            standby = true
        case .leaseTaken:
            standby = false
            pushDueAt = now
            pullAll = true
            if failures > 0 { retryAt = now }
            liveRetryAt = nil
        case .syncEnded(let succeeded):
            guard case .sync(let push, let pull)? = inFlight else { return }
            inFlight = nil
            if succeeded {
                failures = 0
                retryAt = nil
                if let interval = policy.interval { periodicDueAt = now + interval }
            } else {
                // Put the work back, and wait before trying it again.
                if push, pushDueAt == nil { pushDueAt = now }
                if let pull { pullCollections.formUnion(pull) } else { pullAll = true }
                failures += 1
                retryAt = now + retry.delay(beforeAttempt: failures + 1, unit: jitterUnit())
            }
        }
    }

    /// The actions due at `now`, which are then under way: at most one sync at a time, and one live connection.
    mutating func actions(at now: Duration) -> [Action] {
        var due: [Action] = []
        if standby {
            if live != .closed {
                live = .closed
                due.append(.closeLiveConnection)
            }
            return due
        }
        if inFlight == nil, retryAt.map({ $0 <= now }) ?? true {
            let periodic = periodicDueAt.map { $0 <= now } ?? false
            let push = (pushDueAt.map { $0 <= now } ?? false) || periodic
            let all = pullAll || periodic
            if push || all || !pullCollections.isEmpty {
                let action = Action.sync(push: push, pull: all ? nil : pullCollections)
                if push { pushDueAt = nil }
                pullAll = false
                pullCollections = []
                if periodic { periodicDueAt = nil }
                inFlight = action
                due.append(action)
            }
        }
        if policy.liveUpdates, live == .closed, liveRetryAt.map({ $0 <= now }) ?? true {
            live = .opening
            due.append(.openLiveConnection)
        }
        return due
    }

    /// When time alone makes an action due next; `nil` when nothing is waiting (then only events wake it).
    var nextWake: Duration? {
        if standby { return nil }
        var times: [Duration] = []
        if inFlight == nil {
            let work = [pushDueAt, periodicDueAt].compactMap { $0 }
            let pulls = pullAll || !pullCollections.isEmpty
            if let retryAt, !work.isEmpty || pulls || failures > 0 {
                times.append(max(retryAt, work.min() ?? retryAt))
            } else {
                times += work
            }
        }
        if policy.liveUpdates, live == .closed, let liveRetryAt { times.append(liveRetryAt) }
        return times.min()
    }

    /// What time alone makes it do next (at ``nextWake``), in words; `nil` when only an event will.
    var nextActionDescription: String? {
        guard let wake = nextWake else { return nil }
        if inFlight == nil {
            if let retryAt, retryAt == wake { return "retry the failed sync" }
            if let pushDueAt, pushDueAt == wake { return "push local changes" }
            if let periodicDueAt, periodicDueAt == wake { return "periodic full sync" }
        }
        return "reopen the live connection"
    }

    /// What it is doing, in one word.
    var phase: Phase {
        if standby { return .standby }
        if inFlight != nil { return .syncing }
        if failures > 0 { return .retrying }
        if pushDueAt != nil || pullAll || !pullCollections.isEmpty { return .waiting }
        return .idle
    }
}
