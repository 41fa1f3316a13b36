import CairnProtocol
import CairnTesting
import Foundation
import Testing

@testable import Cairn

/// Two clients on one store file in this process stand for an app and its extension: each sees the other's writes
/// without reopening, and only one syncs at a time (the store's sync lease).
/// No wait here gives up after a time of its own (a loaded machine only makes it longer): the time limit is the only
/// safety net.
@Suite("Shared store: several clients on one file", .timeLimit(.minutes(20)))
struct SharedStoreTests {
    /// Waits until `condition` holds (true once it does; a stuck wait ends at the suite's time limit).
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        try await waitUntil(condition)
        return true
    }

    /// The next value of `iterator` (nil when the stream ended).
    static func next<Value: Sendable>(_ iterator: inout AsyncThrowingStream<Value, any Error>.Iterator) async throws -> Value? {
        try await iterator.next()
    }

    static func serverIDs(_ fixture: Fixture) async throws -> [String] {
        try await fixture.pullAll("rita", "notes").changes.map(\.id).sorted()
    }

    @Test("a second client on the same file sees the first one's writes through observe() and observeCount(), without reopening")
    func observeAcrossClients() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let writer = try await fixture.client("alice", store: .file(path))
            let reader = try await fixture.client("alice", store: .file(path))
            var records = reader.observe(Query("notes")).makeAsyncIterator()
            var counts = reader.observeCount(Query("notes")).makeAsyncIterator()
            #expect(try await Self.next(&records)?.isEmpty == true)
            #expect(try await Self.next(&counts) == 0)

            try writer.save("notes", id: "n-1", data: ["title": "written by the other client"])
            let seen = try await Self.next(&records)
            #expect(seen?.map(\.id) == ["n-1"])
            #expect(seen?.first?.data["title"] == "written by the other client")
            #expect(try await Self.next(&counts) == 1)

            // The reader's own writes arrive as always; the writer's arrive however often they come.
            try reader.save("notes", id: "n-2", data: ["title": "its own"])
            #expect(try await Self.next(&records)?.count == 2)
            try writer.delete("notes", id: "n-1")
            #expect(try await Self.next(&records)?.map(\.id) == ["n-2"])
        }
    }

    @Test("one scheduler syncs, the other stands by and its sync() is refused; its writes are pushed by the one that syncs; it takes over when that one stops")
    func oneSchedulerSyncs() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let fast = { (configuration: inout CairnConfiguration) in
                configuration.scheduling = SchedulingPolicy(pushDelay: .milliseconds(50), interval: nil)
            }
            let app = try await fixture.client("alice", store: .file(path), network: nil, configure: fast)
            let widget = try await fixture.client("alice", store: .file(path), network: nil, configure: fast)
            let appRun = Task { await app.run() }
            defer { appRun.cancel() }
            #expect(try await Self.eventually { await app.status().scheduler.phase == .idle })
            let widgetRun = Task { await widget.run() }
            defer { widgetRun.cancel() }
            #expect(try await Self.eventually { await widget.status().scheduler.phase == .otherProcess })
            #expect(await widget.status().scheduler.liveConnected == false)

            let refused = await #expect(throws: CairnError.self) { try await widget.sync() }
            #expect(refused?.code == .syncInAnotherProcess)
            #expect(refused?.isRetryable == true)

            try widget.save("notes", id: "from-widget", data: ["title": "queued by the one standing by"])
            let pushed = try await Self.eventually { try await Self.serverIDs(fixture) == ["from-widget"] }
            let (appStatus, widgetStatus, appHistory) = (await app.status().scheduler, await widget.status().scheduler, try app.history())
            #expect(pushed, "\(appStatus) \(widgetStatus) \(app.hasPendingUpload) \(appHistory)")
            #expect(try await Self.eventually { !widget.hasPendingUpload })

            appRun.cancel()
            await appRun.value
            #expect(try await Self.eventually { await widget.status().scheduler.phase == .idle })
            try app.save("notes", id: "from-app", data: ["title": "queued after the app stopped syncing"])
            #expect(try await Self.eventually { try await Self.serverIDs(fixture) == ["from-app", "from-widget"] })
            // No run failed; the app's run may have been cancelled with its scheduler.
            let history = try widget.history()
            #expect(history.allSatisfy { $0.error == nil || $0.error?.hasPrefix("cancelled:") == true }, "\(history)")
        }
    }

    @Test("a file queued by a process that stands by is sent once, by the process that syncs")
    func filesGoThroughTheSyncingProcess() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let app = try await fixture.client("alice", store: .file(path), network: nil)
            // The widget has no network: only the app can have sent the file.
            let widgetNetwork = SwitchableTransport()
            let widget = try await fixture.client("alice", store: .file(path), network: widgetNetwork)
            widgetNetwork.isOnline = false
            let appRun = Task { await app.run() }
            defer { appRun.cancel() }
            #expect(try await Self.eventually { await app.status().scheduler.phase == .idle })

            let localID = try widget.files.upload(from: try TestFiles.make(200_000), tags: ["from-widget"])
            #expect(try await Self.eventually { try widget.files.upload(localID)?.state == .completed })
            // Two processes sending it would have made two files: the server's create step is not idempotent.
            let sent = try await app.files.search(FileSearch(tags: ["from-widget"]))
            #expect(sent.count == 1)
            #expect(sent.first?.size == 200_000)
        }
    }

    @Test("a sync waits while another holder syncs, is refused at once by a standing holder, and takes over a lapsed lease or one whose process is gone")
    func leaseRules() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            // The lease's waits run on the client's clock and its expiry on the wall clock: both move only when told, so
            // "at once" and "after waiting" are told apart by the waits taken, not by real time.
            let clock = ManualClock()
            let wall = ManualWallClock()
            let client = try await fixture.client("alice", store: .file(Fixture.temporaryStorePath())) {
                $0.clock = clock
                $0.wallClock = wall
                $0.sharedStore = SharedStorePolicy(leaseWait: .seconds(30))
            }
            let store = client.store
            func hold(pid: Int32, standing: Bool, for seconds: Double) throws {
                let holder = SyncLeaseTable.Holder(
                    id: "\(pid)-other", pid: pid, host: SyncLease.host, standing: standing, expiresAt: wall.now().addingTimeInterval(seconds))
                try store.writer.write { db in try db.execute(sql: "DELETE FROM cairn_sync_lease") }
                #expect(try store.writer.write { db in try store.syncLease.take(db, holder, now: wall.now(), isRunning: { _ in true }) } == nil)
            }

            // A scheduler in a running process stands on it: refused at once, without one wait on the clock.
            try hold(pid: getpid(), standing: true, for: 60)
            let sleepsBefore = clock.totalSleeps
            let refused = await #expect(throws: CairnError.self) { try await client.sync() }
            #expect(refused?.code == .syncInAnotherProcess)
            #expect(clock.totalSleeps == sleepsBefore, "refused after waiting")

            // A one-off sync of a running process: waited for until it lapses (here after a second of wall-clock time).
            try hold(pid: getpid(), standing: false, for: 1)
            let waiting = Task { try await client.sync() }
            // While the lease has not lapsed, each retry (every 100 ms of the client's clock) finds it taken again.
            for _ in 0..<3 {
                let retryAt = clock.now.advanced(by: .milliseconds(100))
                try await waitUntil { clock.deadlines.contains(retryAt) }
                clock.advance(by: .milliseconds(100))
            }
            try await waitUntil { clock.deadlines.contains(clock.now.advanced(by: .milliseconds(100))) }
            #expect(try await store.writer.read { db in try store.syncLease.holder(db) }?.id == "\(getpid())-other", "still waiting")
            // It lapses: the next retry takes it.
            wall.advance(by: 1)
            clock.advance(by: .milliseconds(100))
            try await waiting.value

            // The holder's process is gone (killed): taken over at once, although the lease has not lapsed (a standing
            // holder that still ran would refuse the sync, as above).
            let gone = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exit 0"], environment: [:])
            await gone.exit()
            try hold(pid: gone.pid, standing: true, for: 60)
            try await client.sync()
            // Given back after the sync: nobody holds it.
            #expect(try await store.writer.read { db in try store.syncLease.holder(db) } == nil)
        }
    }

    @Test("suspension gives the lease back and refuses syncs until the app resumes; a standing scheduler then takes it again")
    func suspension() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let client = try await fixture.client("alice", store: .file(Fixture.temporaryStorePath()), network: nil)
            let run = Task { await client.run() }
            defer { run.cancel() }
            #expect(try await Self.eventually { await client.status().scheduler.phase == .idle })
            let lease = try #require(client.shared?.lease)
            #expect(lease.isHeld)

            // What CairnClient.suspendNotification does to each store before GRDB releases SQLite's locks (posting the
            // notification here would suspend every other test's stores too).
            lease.suspend()
            #expect(!lease.isHeld)
            #expect(try await client.store.writer.read { db in try client.store.syncLease.holder(db) } == nil)
            #expect(try await Self.eventually { await client.status().scheduler.phase == .otherProcess })
            let refused = await #expect(throws: CairnError.self) { try await client.sync() }
            #expect(refused?.code == .cancelled)

            lease.resume()
            #expect(try await Self.eventually { await client.status().scheduler.phase == .idle && lease.isHeld })
        }
    }
}
