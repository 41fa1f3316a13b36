import Foundation
import Testing

@testable import Cairn

@Suite("Scheduler: standing by while another process syncs the store")
struct SchedulerStandbyTests {
    @Test("on standby nothing is due, the live connection closes and time wakes nothing; taking the lease makes everything due once")
    func standby() {
        var machine = SyncSchedulerTests.idle()
        machine.handle(.leaseHeldElsewhere, at: .seconds(10))
        #expect(machine.phase == .standby)
        #expect(machine.actions(at: .seconds(10)) == [.closeLiveConnection])
        machine.handle(.localWrite, at: .seconds(11))
        machine.handle(.liveNotice(collection: "notes"), at: .seconds(11))
        #expect(machine.actions(at: .seconds(2000)) == [], "the process that syncs pushes and pulls")
        #expect(machine.nextWake == nil)

        machine.handle(.leaseTaken, at: .seconds(2000))
        #expect(machine.actions(at: .seconds(2000)) == [.sync(push: true, pull: nil), .openLiveConnection])
        #expect(machine.phase == .syncing)
    }

    @Test("a sync cut short by losing the lease is put back, and retried at once when the lease is taken again")
    func lostMidSync() {
        var machine = SyncSchedulerTests.idle()
        machine.handle(.localWrite, at: .seconds(1))
        #expect(machine.actions(at: .seconds(2)) == [.sync(push: true, pull: [])])
        machine.handle(.leaseHeldElsewhere, at: .milliseconds(2100))
        machine.handle(.syncEnded(succeeded: false), at: .milliseconds(2200))
        #expect(machine.actions(at: .seconds(100)) == [.closeLiveConnection])
        machine.handle(.leaseTaken, at: .seconds(100))
        #expect(machine.actions(at: .seconds(100)) == [.sync(push: true, pull: nil), .openLiveConnection])
    }

    @Test("the status names the other process's sync")
    func status() {
        var machine = SyncSchedulerTests.idle()
        machine.handle(.leaseHeldElsewhere, at: .zero)
        #expect(SchedulerStatus(machine, now: .zero, wallClock: Date()).phase == .otherProcess)
        #expect(SchedulerStatus.Phase.otherProcess.rawValue == "other-process")
    }
}
