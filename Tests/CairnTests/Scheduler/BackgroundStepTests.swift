import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Background sync steps")
struct BackgroundStepTests {
    @Test("a bounded step stops promptly when its time runs out or it is cancelled, keeps what it did, and the next one finishes")
    func boundedStep() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
        for start in stride(from: 0, to: 6000, by: 1000) {
            _ = try await fixture.push("alice", (start..<start + 1000).map { index in
                SyncOperation(opId: newOpID(), collection: "logs", id: "l-\(index)", op: .create, data: ["message": .string("entry \(index)")])
            })
        }
        let bob = try await fixture.client("bob") { $0.pageSize = 50 }
        try bob.create("notes", id: "from-bob", data: ["title": "queued"])

        // Cancelled from outside (an expiration handler) in the middle of the pull: it ends promptly and keeps what it
        // did. Three seconds, not one: the whole suite runs in parallel on two cores (timing belongs to benchmarks).
        let step = Task { await bob.backgroundSync(timeLimit: .seconds(120)) }
        let waiting = ContinuousClock.now
        while await (bob.status().collections["logs"]?.appliedRecords ?? 0) == 0, ContinuousClock.now - waiting < .seconds(60) {
            try await Task.sleep(for: .milliseconds(5))
        }
        let cancelled = ContinuousClock.now
        step.cancel()
        let outcome = await step.value
        let took = ContinuousClock.now - cancelled
        #expect(took < .seconds(3), "the step ended \(took) after its cancellation")
        #expect(outcome == .expired)
        #expect(try bob.count(Query("logs")) < 6000)
        #expect(!bob.hasPendingUpload, "the push came first and was kept")

        // A time limit ends it the same way (or it completes first).
        let limited = ContinuousClock.now
        let timed = await bob.backgroundSync(timeLimit: .milliseconds(100))
        #expect(timed == .expired || timed == .completed)
        #expect(ContinuousClock.now - limited < .milliseconds(100) + .seconds(1))

        #expect(await bob.backgroundSync(timeLimit: .seconds(60)) == .completed)
        #expect(try bob.count(Query("logs")) == 6000)
        #expect(try await bob.verify("logs").matches)

        await fixture.server.embedded.stopListening()
        try bob.create("notes", id: "offline", data: ["title": "waits"])
        #expect(await bob.backgroundSync(timeLimit: .seconds(10)) == .failed)
        #expect(bob.hasPendingUpload)
    }
}
