import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Background sync", .timeLimit(.minutes(20)))
struct BackgroundSyncTests {
    /// Waits until `condition` holds (true once it does), with no deadline of its own: the suite's time limit is the
    /// safety net.
    func eventually(_ condition: () throws -> Bool) async throws -> Bool {
        try await waitUntil { try condition() }
        return true
    }

    @Test("live notices make a listening client pull a changed collection at once; it catches up when it connects")
    func liveUpdates() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let bob = try await fixture.client("bob")
            try alice.create("notes", id: "before", data: ["title": "written before bob listened"])
            try await alice.sync()
            let running = Task { await bob.run() }
            defer { running.cancel() }
            // Starting (and connecting) pulls what changed while bob was not listening.
            #expect(try await eventually { try bob.record("notes", id: "before") != nil })
            // Now the stream is open: a new change arrives by its notice.
            try alice.create("notes", id: "live", data: ["title": "pushed"])
            try await alice.sync()
            #expect(try await eventually { try bob.record("notes", id: "live") != nil })
        }
    }

    @Test("the scheduler retries a failed upload with backoff, without a new write or a whole interval")
    func autoSync() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let clock = ManualClock()
            let interval = Duration.seconds(3600)
            let alice = try await fixture.client("alice", network: network) {
                $0.clock = clock
                $0.scheduling = SchedulingPolicy(interval: interval, liveUpdates: false)
            }
            network.isOnline = false
            try alice.create("notes", id: "later", data: ["title": "offline"])
            let running = Task { await alice.run() }
            defer { running.cancel() }
            // Offline: every sync fails, and the timer keeps trying on its backoff (the clock moves only when told).
            for _ in 0..<5 {
                await clock.waitForSleepers(1)
                clock.advance(by: .seconds(1))
            }
            #expect(alice.hasPendingUpload)
            // Attempts go on without a new write.
            #expect(network.requestCount >= 5)
            #expect(clock.totalSleeps >= 5)

            network.isOnline = true
            var waited = Duration.zero
            while alice.hasPendingUpload, waited < interval {
                await clock.waitForSleepers(1)
                clock.advance(by: .seconds(1))
                waited += .seconds(1)
                try await Task.sleep(for: .milliseconds(1))
            }
            #expect(!alice.hasPendingUpload, "the upload waited \(waited) of clock time")
            #expect(waited < .seconds(60), "the retry waited \(waited): backoff, not the \(interval) interval")
            let page = try await fixture.pullAll("rita", "notes")
            #expect(page.changes.map(\.id) == ["later"])
        }
    }

    @Test("a second sync request joins the one running; cancellation stops cleanly")
    func joinAndCancel() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.writeBatch { batch in
                for index in 0..<300 { try batch.create("logs", id: "l\(index)", data: ["message": "m"]) }
            }
            async let first = alice.sync()
            async let second = alice.sync()
            let (a, b) = try await (first, second)
            #expect(a.pushed + b.pushed >= 300)
            #expect(try await fixture.pullAll("rita", "logs").changes.count == 300)

            try alice.writeBatch { batch in
                for index in 0..<300 { try batch.patch("logs", id: "l\(index)", ["message": "again"]) }
            }
            let task = Task { try await alice.sync() }
            task.cancel()
            _ = await task.result
            try await alice.sync()
            #expect(!alice.hasPendingUpload)
            #expect(try await alice.verify("logs").matches)
        }
    }

    @Test("status reports phases, monotonic progress and counts")
    func statusUpdates() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.writeBatch { batch in
                for index in 0..<50 { try batch.create("logs", id: "l\(index)", data: ["message": "m"]) }
            }
            try await alice.sync()
            let bob = try await fixture.client("bob") { $0.pageSize = 7 }
            let updates = await bob.statusUpdates()
            let collector = Task {
                var seen: [SyncStatus] = []
                for await status in updates {
                    seen.append(status)
                    if status.lastSyncCompleted != nil && status.phase == .idle { break }
                }
                return seen
            }
            try await bob.sync()
            let seen = await collector.value
            #expect(seen.contains { $0.phase == .pulling })
            let progress = seen.compactMap { $0.collections["logs"]?.appliedRecords }
            #expect(progress == progress.sorted())
            #expect(progress.last == 50)
            #expect(seen.last?.pendingUploads == 0)
        }
    }
}
