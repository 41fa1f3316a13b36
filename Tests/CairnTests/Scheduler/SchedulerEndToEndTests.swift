import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Scheduler: clients that keep themselves in sync")
struct SchedulerEndToEndTests {
    /// Waits until `condition` holds, up to `limit` of real time; returns how long it took, or nil.
    func within(_ limit: Duration, _ condition: () throws -> Bool) async throws -> Duration? {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            if try condition() { return ContinuousClock.now - start }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try condition() ? ContinuousClock.now - start : nil
    }

    @Test("two running clients see each other's writes with no sync calls, and converge again after a server restart")
    func convergence() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
        let policy = { (configuration: inout CairnConfiguration) in
            configuration.scheduling = SchedulingPolicy(pushDelay: .milliseconds(50), interval: nil)
            configuration.connectOnOpen = true
        }
        let alice = try await fixture.client("alice", network: nil, configure: policy)
        let bob = try await fixture.client("bob", network: nil, configure: policy)
        let runs = [Task { await alice.run() }, Task { await bob.run() }]
        defer { for run in runs { run.cancel() } }
        // Wait for both live connections.
        let aliceLive = await waitForLive(alice), bobLive = await waitForLive(bob)
        #expect(aliceLive && bobLive)

        try alice.create("notes", id: "from-alice", data: ["title": "a"])
        // Timing is the benchmark's job (`cairn bench live`); here the write must arrive with no sync call at all.
        let toBob = try await within(.seconds(15)) { try bob.record("notes", id: "from-alice") != nil }
        #expect(toBob != nil, "bob did not see alice's write")
        try bob.create("notes", id: "from-bob", data: ["title": "b"])
        let toAlice = try await within(.seconds(15)) { try alice.record("notes", id: "from-bob") != nil }
        #expect(toAlice != nil, "alice did not see bob's write")

        // The server goes away: its port closes, and the live connections drop. Writes wait, then arrive.
        await fixture.server.embedded.stopListening()
        try alice.patch("notes", id: "from-bob", ["title": "edited while the server was down"])
        try await Task.sleep(for: .milliseconds(300))
        #expect(alice.hasPendingUpload)
        try await fixture.server.embedded.startListening()
        let converged = try await within(.seconds(30)) {
            try bob.record("notes", id: "from-bob")?.data["title"] == "edited while the server was down" && !alice.hasPendingUpload
        }
        #expect(converged != nil, "the clients did not converge after the restart")
        let aliceBack = await waitForLive(alice), bobBack = await waitForLive(bob)
        #expect(aliceBack && bobBack)
        let aliceMatches = try await alice.verify("notes").matches, bobMatches = try await bob.verify("notes").matches
        #expect(aliceMatches && bobMatches)
    }

    @Test("cancelling run() stops the scheduler: the status says so, and later writes stay queued")
    func cancellation() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
        let alice = try await fixture.client("alice") { $0.scheduling = SchedulingPolicy(pushDelay: .milliseconds(20), interval: nil) }
        let run = Task { await alice.run() }
        #expect(await waitForLive(alice))
        run.cancel()
        await run.value
        #expect(await alice.status().scheduler.phase == .notRunning)
        try alice.create("notes", id: "queued", data: ["title": "stays"])
        try await Task.sleep(for: .milliseconds(100))
        #expect(alice.hasPendingUpload)
    }

    @Test("idle: a minute of clock time with nothing to do makes no request beyond the live connection")
    func idle() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
        let clock = ManualClock()
        let network = SwitchableTransport()
        let alice = try await fixture.client("alice", network: network) {
            $0.clock = clock
            $0.scheduling = SchedulingPolicy(pushDelay: .seconds(1), interval: .seconds(900))
        }
        let run = Task { await alice.run() }
        defer { run.cancel() }
        #expect(await waitForLive(alice))
        let before = network.requestCount
        for _ in 0..<60 {
            clock.advance(by: .seconds(1))
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(network.requestCount == before, "\(network.requestCount - before) requests while idle")
        #expect(await alice.status().scheduler.phase == .idle)
        // A write is pushed after the delay of clock time, not before.
        try alice.create("notes", id: "n-1", data: ["title": "now"])
        try await Task.sleep(for: .milliseconds(50))
        #expect(alice.hasPendingUpload)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        let start = ContinuousClock.now
        while alice.hasPendingUpload, ContinuousClock.now - start < .seconds(5) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!alice.hasPendingUpload)
    }

    func waitForLive(_ client: CairnClient) async -> Bool {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .seconds(30) {
            let scheduler = await client.status().scheduler
            if scheduler.liveConnected && scheduler.phase == .idle { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
