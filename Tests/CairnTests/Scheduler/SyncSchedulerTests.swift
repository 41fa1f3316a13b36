import Foundation
import Testing

@testable import Cairn

@Suite("Scheduler: the state machine, step by step")
struct SyncSchedulerTests {
    static func scheduler(interval: Duration? = .seconds(900), live: Bool = true) -> SyncScheduler {
        var scheduler = SyncScheduler(
            policy: SchedulingPolicy(pushDelay: .seconds(1), interval: interval, liveUpdates: live),
            retry: RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(30), maximumAttempts: 4, jitter: 0))
        scheduler.jitterUnit = { 0.5 }
        return scheduler
    }

    @Test("starting syncs everything once and opens the live connection; then it is idle with only the periodic sync ahead")
    func start() {
        var machine = Self.scheduler()
        machine.handle(.started, at: .zero)
        #expect(machine.actions(at: .zero) == [.sync(push: true, pull: nil), .openLiveConnection])
        #expect(machine.phase == .syncing)
        #expect(machine.actions(at: .zero) == [], "one sync at a time, one connection")
        machine.handle(.liveOpened, at: .milliseconds(10))
        machine.handle(.syncEnded(succeeded: true), at: .milliseconds(20))
        // The connection's catch-up pull follows.
        #expect(machine.actions(at: .milliseconds(20)) == [.sync(push: false, pull: nil)])
        machine.handle(.syncEnded(succeeded: true), at: .milliseconds(30))
        #expect(machine.phase == .idle)
        #expect(machine.actions(at: .seconds(60)) == [])
        #expect(machine.nextWake == .milliseconds(30) + .seconds(900))
    }

    @Test("local writes push after the delay, together")
    func debouncedPush() {
        var machine = Self.idle()
        machine.handle(.localWrite, at: .seconds(100))
        machine.handle(.localWrite, at: .milliseconds(100_400))
        #expect(machine.phase == .waiting)
        #expect(machine.nextWake == .seconds(101))
        #expect(machine.nextActionDescription == "push local changes")
        #expect(machine.actions(at: .milliseconds(100_900)) == [])
        #expect(machine.actions(at: .seconds(101)) == [.sync(push: true, pull: [])])
        machine.handle(.localWrite, at: .milliseconds(101_100))
        machine.handle(.syncEnded(succeeded: true), at: .milliseconds(101_200))
        // A write during the push gets its own push.
        #expect(machine.actions(at: .milliseconds(102_100)) == [.sync(push: true, pull: [])])
    }

    @Test("a live notice pulls its collection at once; notices during a sync are pulled after it")
    func notices() {
        var machine = Self.idle()
        machine.handle(.liveNotice(collection: "notes"), at: .seconds(5))
        #expect(machine.actions(at: .seconds(5)) == [.sync(push: false, pull: ["notes"])])
        machine.handle(.liveNotice(collection: "tasks"), at: .seconds(5))
        machine.handle(.liveNotice(collection: "logs"), at: .seconds(5))
        #expect(machine.actions(at: .seconds(5)) == [])
        machine.handle(.syncEnded(succeeded: true), at: .seconds(6))
        #expect(machine.actions(at: .seconds(6)) == [.sync(push: false, pull: ["tasks", "logs"])])
    }

    @Test("a failed sync keeps its work and retries with capped exponential backoff, without a new write")
    func backoff() {
        var machine = Self.idle()
        machine.handle(.localWrite, at: .zero)
        var now = Duration.seconds(1)
        var delays: [Duration] = []
        for _ in 0..<7 {
            #expect(machine.actions(at: now) == [.sync(push: true, pull: [])])
            machine.handle(.syncEnded(succeeded: false), at: now)
            #expect(machine.phase == .retrying)
            #expect(machine.actions(at: now) == [])
            let wake = try! #require(machine.nextWake)
            delays.append(wake - now)
            now = wake
        }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30)])
        #expect(machine.nextActionDescription == "retry the failed sync")
        #expect(machine.actions(at: now) == [.sync(push: true, pull: [])])
        machine.handle(.syncEnded(succeeded: true), at: now)
        #expect(machine.phase == .idle)
        #expect(machine.failures == 0)
    }

    @Test("connectivity coming back retries at once, and reopens the live connection")
    func connectivity() {
        var machine = Self.idle()
        machine.handle(.localWrite, at: .milliseconds(9_500))
        machine.handle(.liveClosed, at: .seconds(10))
        #expect(machine.actions(at: .milliseconds(10_500)) == [.sync(push: true, pull: [])])
        machine.handle(.syncEnded(succeeded: false), at: .milliseconds(10_500))
        #expect(machine.actions(at: .milliseconds(10_500)) == [])
        #expect(machine.nextWake == .seconds(11), "the live connection's backoff comes first")
        machine.handle(.connectivityRestored, at: .milliseconds(10_600))
        #expect(machine.actions(at: .milliseconds(10_600)) == [.sync(push: true, pull: []), .openLiveConnection])
    }

    @Test("the live connection reopens with backoff when it drops, and each reconnection catches up")
    func reconnection() {
        var machine = Self.idle()
        var now = Duration.seconds(50)
        var waits: [Duration] = []
        for _ in 0..<4 {
            machine.handle(.liveClosed, at: now)
            #expect(machine.actions(at: now) == [])
            let wake = try! #require(machine.nextWake)
            waits.append(wake - now)
            now = wake
            #expect(machine.actions(at: now) == [.openLiveConnection])
        }
        #expect(waits == [.seconds(1), .seconds(2), .seconds(4), .seconds(8)])
        machine.handle(.liveOpened, at: now)
        #expect(machine.actions(at: now) == [.sync(push: false, pull: nil)])
        machine.handle(.syncEnded(succeeded: true), at: now)
        machine.handle(.liveClosed, at: now)
        #expect(machine.nextWake == now + .seconds(1), "a successful connection resets the backoff")
    }

    @Test("idle means no wake-up at all without a periodic sync, and only the periodic one with it")
    func idle() {
        var machine = Self.idle(interval: nil)
        #expect(machine.nextWake == nil)
        #expect(machine.actions(at: .seconds(3600)) == [])
        var periodic = Self.idle(interval: .seconds(300))
        let wake = try! #require(periodic.nextWake)
        #expect(periodic.actions(at: wake - .seconds(1)) == [])
        #expect(periodic.actions(at: wake) == [.sync(push: true, pull: nil)])
    }

    /// A scheduler after its start: synced, live connection open.
    static func idle(interval: Duration? = .seconds(900)) -> SyncScheduler {
        var machine = scheduler(interval: interval)
        machine.handle(.started, at: .zero)
        _ = machine.actions(at: .zero)
        machine.handle(.liveOpened, at: .zero)
        machine.handle(.syncEnded(succeeded: true), at: .zero)
        _ = machine.actions(at: .zero)
        machine.handle(.syncEnded(succeeded: true), at: .zero)
        return machine
    }
}
