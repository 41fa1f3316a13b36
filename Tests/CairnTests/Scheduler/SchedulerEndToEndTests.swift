import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

/// No wait here gives up after a time of its own (a busy machine only makes it longer): the time limit is the only
/// safety net, and timing is the benchmark's job (`cairn bench live`).
@Suite("Scheduler: clients that keep themselves in sync", .timeLimit(.minutes(20)))
struct SchedulerEndToEndTests {

    @Test("two running clients see each other's writes with no sync calls, and converge again after a server restart")
    func convergence() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let policy = { (configuration: inout CairnConfiguration) in
                configuration.scheduling = SchedulingPolicy(pushDelay: .milliseconds(50), interval: nil)
                configuration.connectOnOpen = true
            }
            let alice = try await fixture.client("alice", network: nil, configure: policy)
            let bob = try await fixture.client("bob", network: nil, configure: policy)
            let runs = [Task { await alice.run() }, Task { await bob.run() }]
            defer { for run in runs { run.cancel() } }
            // Wait for both live connections.
            try await waitForLive(alice)
            try await waitForLive(bob)

            try alice.create("notes", id: "from-alice", data: ["title": "a"])
            // The write must arrive with no sync call at all.
            try await waitUntil { try bob.record("notes", id: "from-alice") != nil }
            try bob.create("notes", id: "from-bob", data: ["title": "b"])
            try await waitUntil { try alice.record("notes", id: "from-bob") != nil }

            // The server goes away: its port closes, and the live connections drop. Writes wait, then arrive.
            await fixture.server.embedded.stopListening()
            try alice.patch("notes", id: "from-bob", ["title": "edited while the server was down"])
            // The scheduler tried to push it and failed: the write waits.
            try await waitUntil { await alice.status().scheduler.failures > 0 }
            #expect(alice.hasPendingUpload)
            try await fixture.server.embedded.startListening()
            try await waitUntil {
                try bob.record("notes", id: "from-bob")?.data["title"] == "edited while the server was down" && !alice.hasPendingUpload
            }
            try await waitForLive(alice)
            try await waitForLive(bob)
            let aliceMatches = try await alice.verify("notes").matches, bobMatches = try await bob.verify("notes").matches
            #expect(aliceMatches && bobMatches)
        }
    }

    @Test("cancelling run() stops the scheduler: the status says so, and later writes stay queued")
    func cancellation() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice") { $0.scheduling = SchedulingPolicy(pushDelay: .milliseconds(20), interval: nil) }
            let run = Task { await alice.run() }
            try await waitForLive(alice)
            run.cancel()
            await run.value
            #expect(await alice.status().scheduler.phase == .notRunning)
            try alice.create("notes", id: "queued", data: ["title": "stays"])
            try await Task.sleep(for: .milliseconds(100))
            #expect(alice.hasPendingUpload)
        }
    }

    @Test("idle: a minute of clock time with nothing to do makes no request beyond the live connection")
    func idle() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let clock = ManualClock()
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network) {
                $0.clock = clock
                $0.scheduling = SchedulingPolicy(pushDelay: .seconds(2), interval: .seconds(900))
            }
            let earlier = try alice.history().count
            let run = Task { await alice.run() }
            defer { run.cancel() }
            // Settled: the first sync, and the pull that catches up once the live connection opened, are both done.
            try await waitForLive(alice)
            try await waitUntil { try alice.history().filter { $0.endedAt != nil }.count >= earlier + 2 }
            try await waitForLive(alice)
            let before = network.requestCount
            for _ in 0..<60 {
                clock.advance(by: .seconds(1))
                try await Task.sleep(for: .milliseconds(2))
            }
            #expect(network.requestCount == before, "\(network.requestCount - before) requests while idle")
            #expect(await alice.status().scheduler.phase == .idle)
            // A write is pushed after the delay of clock time, not before: the scheduler took it in (waiting) and armed
            // its timer for the push delay from now (2 s: the store lease's keeper, on a store file, ticks every second),
            // and nothing is sent until the clock gets there.
            let pushAt = clock.now.advanced(by: .seconds(2))
            try alice.create("notes", id: "n-1", data: ["title": "now"])
            try await waitUntil {
                let scheduler = await alice.status().scheduler
                return scheduler.phase == .waiting && scheduler.nextAction == "push local changes" && clock.deadlines.contains(pushAt)
            }
            #expect(alice.hasPendingUpload)
            clock.advance(by: .seconds(2))
            try await waitUntil { !alice.hasPendingUpload }
        }
    }

    /// Waits until the scheduler holds its live connection and has nothing to do.
    func waitForLive(_ client: CairnClient) async throws {
        try await waitUntil {
            let scheduler = await client.status().scheduler
            return scheduler.liveConnected && scheduler.phase == .idle
        }
    }
}
