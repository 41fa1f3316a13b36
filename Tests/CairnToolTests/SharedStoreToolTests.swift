import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

/// One store file shared by real processes: `cairn sync --watch`, `cairn put` and this test process write and sync it
/// while watchers are killed with SIGKILL. Only the process holding the store's sync lease syncs; the others' writes
/// are pushed by it; a killed holder is taken over.
@Suite("One store, several processes", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"), .serialized, .timeLimit(.minutes(20)))
struct SharedStoreToolTests {
    static let environment = ProcessInfo.processInfo.environment.merging(["CAIRN_PASSWORD": TestServer.password]) { $1 }

    /// A store that synced once through the tool, and a client on it in this process.
    static func sharedStore(_ fixture: Fixture) async throws -> (path: String, client: CairnClient) {
        let path = Fixture.temporaryStorePath()
        let first = try await Tool.run(
            ["sync", "--store", path, "--server", fixture.server.baseURL.absoluteString, "--project", Fixture.project, "--user", "alice"],
            environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let client = try await fixture.client("alice", store: .file(path), network: nil) {
            $0.scheduling = SchedulingPolicy(pushDelay: .milliseconds(50), interval: nil)
            $0.storeKey = nil  // the tool made the store in plaintext, whatever the encrypted-stores run asks
        }
        return (path, client)
    }

    static func put(_ store: String, _ id: String) async throws {
        let put = try await Tool.run(["put", "--store", store, "notes", id, #"{"title": "written by \#(id)"}"#])
        #expect(put.status == 0, "\(put.stderr)")
    }

    /// Whether `condition` holds within `limit`: a best-effort look that picks what the test does next (the holder
    /// while a run of its is open, else any watcher), never a verdict.
    static func seenWithin(_ limit: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    static func leaseHolder(_ client: CairnClient) throws -> Int64? {
        try client.rows("SELECT pid FROM cairn_sync_lease").first?["pid"]?.integerValue
    }

    @Test("a cairn sync --watch holding the sync lease is killed with SIGKILL: this process's scheduler, standing by, takes over and pushes what cairn put wrote")
    func killedHolderIsTakenOver() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let (store, client) = try await Self.sharedStore(fixture)
            let watcher = try WatchToolTests.Watcher(store: store, password: TestServer.password)
            #expect(try await WatchToolTests.eventually { try Self.leaseHolder(client) == Int64(watcher.process.pid) })
            let run = Task { await client.run() }
            defer { run.cancel() }
            #expect(try await WatchToolTests.eventually { await client.status().scheduler.phase == .otherProcess })

            // The holder's writes and another process's reach the server through the holder.
            try await Self.put(store, "before-kill")
            #expect(try await WatchToolTests.eventually { try await fixture.pullAll("rita", "notes").changes.map(\.id) == ["before-kill"] })

            watcher.process.send(SIGKILL)
            await watcher.process.exit()
            // Its process is gone, so the lease is taken over at once rather than when it lapses (30 s).
            #expect(try await WatchToolTests.eventually { await client.status().scheduler.phase != .otherProcess })
            #expect(try Self.leaseHolder(client) == Int64(getpid()))
            try await Self.put(store, "after-kill")
            #expect(try await WatchToolTests.eventually {
                try await fixture.pullAll("rita", "notes").changes.map(\.id).sorted() == ["after-kill", "before-kill"]
            })
        }
    }

    @Test("watchers killed with SIGKILL at random while cairn put and this process write and sync: every write is on the server once, and no two syncs overlap")
    func killedWhileSharing() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let (store, client) = try await Self.sharedStore(fixture)
            var watchers: [ChildProcess] = []
            var kills: [Date] = []
            var written: [String] = []
            var refusals = 0
            for round in 0..<8 {
                while watchers.count < 2 { watchers.append(try Tool.start(["sync", "--watch", "--store", store], environment: Self.environment)) }
                for index in 0..<3 {
                    try await Self.put(store, "put-\(round)-\(index)")
                    written.append("put-\(round)-\(index)")
                }
                // A batch large enough that the holder is often killed while pushing it (its push starts a second after
                // the write): the next holder sends the same operations again, and the server applies each once.
                let batch = (0..<400).map { "test-\(round)-\($0)" }
                try client.writeBatch { writes in
                    for id in batch { try writes.create("notes", id: id, data: ["title": "written by the test process"]) }
                }
                written += batch
                // A watcher stands on the lease: this process's sync is refused, and its writes are pushed by the holder.
                do { try await client.sync() } catch let error as CairnError where error.code == .syncInAnotherProcess { refusals += 1 }
                // Even rounds kill the holder while a run of its is open (when one is seen within 3 s), odd rounds a watcher
                // at random.
                var victimIndex = Int.random(in: 0..<watchers.count)
                if round % 2 == 0 {
                    let since = (kills.last ?? .distantPast).timeIntervalSince1970
                    let syncing = try await Self.seenWithin(.seconds(3)) {
                        try client.rows("SELECT count(*) AS n FROM cairn_events WHERE ended_at IS NULL AND started_at > ?", arguments: [.number(since)])
                            .first?["n"]?.integerValue ?? 0 > 0
                    }
                    let holder = try Self.leaseHolder(client)
                    if syncing, let index = watchers.firstIndex(where: { Int64($0.pid) == holder }) { victimIndex = index }
                } else {
                    try await Task.sleep(for: .milliseconds(Int.random(in: 50...1500)))
                }
                let victim = watchers.remove(at: victimIndex)
                // Noted before the signal: a run that the kill cut short ended no later than its process died.
                kills.append(Date())
                victim.send(SIGKILL)
                await victim.exit()
            }
            for watcher in watchers {
                watcher.send(SIGINT)
                #expect(await watcher.exit() == 0)
            }
            // The last holders are gone (killed, or stopped and gave the lease back): this process syncs what is left.
            try await client.sync()
            #expect(!client.hasPendingUpload)

            let server = try await fixture.pullAll("rita", "notes").changes
            #expect(server.map(\.id).sorted() == written.sorted())
            let counts = try await fixture.server.server.storage.operationCounts(project: Fixture.project)
            #expect(counts.applied == written.count, "each write applied once")
            #expect(counts.head == Int64(counts.applied))

            // Every sync run of every process is in the store's history, written while it held the lease: none overlaps
            // the next. A run cut short by SIGKILL has no end: it ended by the kill that followed its start.
            let runs = try client.history(limit: 1000).sorted { $0.startedAt < $1.startedAt }
            #expect(runs.count >= 8)
            for (run, next) in zip(runs, runs.dropFirst()) {
                let end = run.endedAt ?? kills.first { $0 >= run.startedAt }
                #expect(end != nil, "a run without an end and without a kill after it: \(run)")
                if let end { #expect(end <= next.startedAt, "\(run) overlaps \(next)") }
            }
            print("shared store: \(runs.count) sync runs, \(runs.filter { $0.endedAt == nil }.count) cut short by SIGKILL, \(refusals) refused syncs")
        }
    }
}
