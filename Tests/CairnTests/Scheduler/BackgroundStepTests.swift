import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

/// The step's ends are read in pages and in clock time, not in real time: a gate holds a page request at a known
/// point, the time limit runs on a manual clock, and no wait gives up (the suite's time limit is the safety net).
@Suite("Background sync steps", .timeLimit(.minutes(20)))
struct BackgroundStepTests {
    @Test("a bounded step stops promptly when its time runs out or it is cancelled, keeps what it did, and the next one finishes")
    func boundedStep() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            for start in stride(from: 0, to: 6000, by: 1000) {
                _ = try await fixture.push("alice", (start..<start + 1000).map { index in
                    SyncOperation(opId: newOpID(), collection: "logs", id: "l-\(index)", op: .create, data: ["message": .string("entry \(index)")])
                })
            }
            // Two pages of 50 pass; the third page's request waits for the test.
            let gate = GatedSyncTransport(holding: "/logs/changes", after: 2)
            let bob = try await fixture.client("bob", network: SwitchableTransport(inner: gate)) {
                $0.pageSize = 50
                $0.adaptsPageSize = false
                // Page by page: the gate counts and holds page requests.
                $0.streamsPages = false
            }
            try bob.create("notes", id: "from-bob", data: ["title": "queued"])

            // Cancelled from outside (an expiration handler) in the middle of the pull: it ends at the next page boundary
            // (no page asked for after the cancel) and keeps what it did.
            let step = Task { await bob.backgroundSync(timeLimit: .seconds(3600)) }
            try await waitUntil {
                let applied = await bob.status().collections["logs"]?.appliedRecords ?? 0
                return gate.heldCount >= 1 && applied >= 100
            }
            step.cancel()
            gate.release()
            let outcome = await step.value
            #expect(outcome == .expired)
            let kept = try bob.count(Query("logs"))
            #expect(kept == 100 || kept == 150, "two pages, and at most the third asked for already: \(kept)")
            #expect(!bob.hasPendingUpload, "the push came first and was kept")

            // A time limit ends it the same way, when the limit has passed on the client's clock: a second client's step
            // waits on a held page until the clock moves past its limit.
            let clock = ManualClock()
            let held = GatedSyncTransport(holding: "/logs/changes", after: 0)
            let other = try await fixture.client("alice", network: SwitchableTransport(inner: held)) {
                $0.clock = clock
                $0.pageSize = 50
                $0.adaptsPageSize = false
                // Page by page: the gate counts and holds page requests.
                $0.streamsPages = false
            }
            let limited = Task { await other.backgroundSync(timeLimit: .milliseconds(100)) }
            // The step's timer is armed for the limit (on a store file the lease's keeper sleeps on this clock too).
            try await waitUntil { held.heldCount >= 1 && clock.deadlines.contains(ManualClock.Instant(offset: .milliseconds(100))) }
            clock.advance(by: .milliseconds(100))
            held.release()
            #expect(await limited.value == .expired)
            #expect(try other.count(Query("logs")) <= 50, "at most the page asked for before the limit")

            // The next step finishes (the limit is no bound here: only completion counts).
            #expect(await bob.backgroundSync(timeLimit: .seconds(3600)) == .completed)
            #expect(try bob.count(Query("logs")) == 6000)
            #expect(try await bob.verify("logs").matches)

            await fixture.server.embedded.stopListening()
            try bob.create("notes", id: "offline", data: ["title": "waits"])
            #expect(await bob.backgroundSync(timeLimit: .seconds(3600)) == .failed)
            #expect(bob.hasPendingUpload)
        }
    }
}
