import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Background sync")
struct BackgroundSyncTests {
    func eventually(_ condition: () throws -> Bool) async throws -> Bool {
        for _ in 0..<200 {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(25))
        }
        return false
    }

    @Test("live notices make a listening client pull a changed collection at once")
    func liveUpdates() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
        let alice = try await fixture.client("alice")
        let bob = try await fixture.client("bob")
        bob.startLiveUpdates()
        defer { bob.stopBackgroundTasks() }
        try await Task.sleep(for: .milliseconds(200))
        try alice.create("notes", id: "live", data: ["title": "pushed"])
        try await alice.sync()
        #expect(try await eventually { try bob.record("notes", id: "live") != nil })
    }

    @Test("auto-sync uploads on a timer, and retries after a failure without a new write")
    func autoSync() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
        let network = SwitchableTransport()
        let alice = try await fixture.client("alice", network: network)
        network.isOnline = false
        try alice.create("notes", id: "later", data: ["title": "offline"])
        alice.startAutoSync(every: .milliseconds(100))
        defer { alice.stopBackgroundTasks() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(alice.hasPendingUpload)
        network.isOnline = true
        #expect(try await eventually { !alice.hasPendingUpload })
        let page = try await fixture.pullAll("rita", "notes")
        #expect(page.changes.map(\.id) == ["later"])
    }

    @Test("a second sync request joins the one running; cancellation stops cleanly")
    func joinAndCancel() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
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

    @Test("status reports phases, monotonic progress and counts")
    func statusUpdates() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
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
