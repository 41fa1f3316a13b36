import CairnProtocol
import CairnTesting
import Foundation
import GRDB
import Synchronization
import Testing

@testable import Cairn

/// The results of sync attempts count in the order the attempts started: a failure that began during an outage and
/// ended after a newer attempt succeeded never makes a healed store look as if it were still failing.
@Suite("Sync results are ordered by when their attempt started", .timeLimit(.minutes(20)))
struct SyncAttemptOrderTests {
    static let outage = ErrorBody(code: .networkUnavailable, message: "The server could not be reached (connection refused)")

    @Test("an older attempt's failure recorded after a newer attempt's success leaves the status healed")
    func statusKeepsTheNewerResult() async {
        let clock = ManualWallClock()
        let center = StatusCenter()
        let older = await center.begin(at: clock.now())          // during the outage: waits on its retries
        clock.advance(by: 2)
        let newer = await center.begin(at: clock.now())          // the server is back
        clock.advance(by: 1)
        let healedAt = clock.now()
        await center.end(newer, at: healedAt, error: nil)
        clock.advance(by: 1)
        await center.end(older, at: clock.now(), error: Self.outage)   // recorded last, started first
        let status = await center.status
        #expect(status.lastError == nil)
        #expect(status.lastSyncCompleted == healedAt)
        #expect(status.phase == .idle)

        // A newer failure still counts, and a later success clears it.
        let failing = await center.begin(at: clock.now())
        await center.end(failing, at: clock.now(), error: Self.outage)
        #expect(await center.status.lastError == Self.outage)
        let next = await center.begin(at: clock.now())
        #expect(await center.status.phase == .connecting)
        await center.end(next, at: clock.now(), error: nil)
        #expect(await center.status.lastError == nil)
    }

    @Test("the phase stays on the newer attempt while an older one ends")
    func phaseFollowsTheNewestAttempt() async {
        let clock = ManualWallClock()
        let center = StatusCenter()
        let older = await center.begin(at: clock.now())
        let newer = await center.begin(at: clock.now())
        await center.update { $0.phase = .pulling }
        await center.end(older, at: clock.now(), error: Self.outage)
        #expect(await center.status.phase == .pulling)
        #expect(await center.status.lastError == Self.outage)
        await center.end(newer, at: clock.now(), error: nil)
        #expect(await center.status.phase == .idle)
        #expect(await center.status.lastError == nil)
    }

    /// Passes requests on, or, while held, keeps them waiting until released and then fails them as offline.
    final class OutageTransport: HTTPTransport, Sendable {
        private let inner = TestTransport.make()
        private let state = Mutex((held: false, waiting: 0))

        func hold(_ value: Bool) { state.withLock { $0.held = value } }
        var waiting: Int { state.withLock { $0.waiting } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            guard state.withLock({ $0.held }) else { return try await inner.send(request) }
            state.withLock { $0.waiting += 1 }
            while state.withLock({ $0.held }) { try await Task.sleep(for: .milliseconds(5)) }
            throw CairnError(.networkUnavailable, "The server could not be reached (test outage)", isRetryable: true)
        }

        func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
            try await inner.stream(request)
        }
    }

    @Test("two clients of one store file (two processes): the older attempt fails last, the diagnostics still say up to date")
    func diagnosticsKeepTheNewerResult() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let clock = ManualWallClock()
            let outage = OutageTransport()
            let watcher = try await fixture.client("alice", store: .file(path), network: SwitchableTransport(inner: outage)) {
                $0.wallClock = clock
                $0.retry = RetryPolicy(initialDelay: .milliseconds(1), maximumDelay: .milliseconds(1), maximumAttempts: 1)
            }
            try watcher.save("notes", id: "n1", data: ["title": "written during the outage"])

            outage.hold(true)
            let older = Task { try await watcher.sync() }
            try await waitUntil { outage.waiting > 0 }
            #expect(outage.waiting == 1)
            clock.advance(by: 2)
            // Two syncs of one store overlap only when the first holder lost the sync lease while its attempt hung (a
            // process suspended past the lease's expiry, whose lease another process took over): as here.
            try await watcher.store.writer.write { db in try db.execute(sql: "DELETE FROM cairn_sync_lease") }
            let other = try await fixture.client("alice", store: .file(path), network: nil) { $0.wallClock = clock }
            try await other.sync()
            clock.advance(by: 1)
            outage.hold(false)
            await #expect(throws: CairnError.self) { try await older.value }

            let history = try other.history()
            #expect(history.map(\.error).map { $0 == nil } == [true, false], "newest started first: \(history)")
            for client in [other, watcher] {
                let report = try await client.diagnostics()
                #expect(report.verdict == .upToDate, "\(report.explanation)")
            }
            #expect(await other.status().lastError == nil)
        }
    }
}

extension SyncAttemptOrderTests {
    @Test("a failure healed by a run cancelled after its pull committed (Ctrl-C of a watcher) is not the store's state")
    func cancelledHealKeepsTheStoreUpToDate() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let clock = ManualWallClock()
            let alice = try await fixture.client("alice", network: nil) {
                $0.wallClock = clock
                $0.retry = RetryPolicy(initialDelay: .milliseconds(1), maximumDelay: .milliseconds(1), maximumAttempts: 1)
            }
            try await alice.sync()
            await fixture.server.embedded.stopListening()
            clock.advance(by: 1)
            await #expect(throws: CairnError.self) { try await alice.sync() }
            #expect(try await alice.diagnostics().verdict == .retrying)

            // The server is back; a run pulls a new change and commits its page, then is cancelled on purpose.
            try await fixture.server.embedded.startListening()
            let bob = try await fixture.client("bob", network: nil)
            try bob.save("notes", id: "from-bob", data: ["title": "written while alice was cut off"])
            try await bob.sync()
            clock.advance(by: 1)
            try await alice.sync()
            try await alice.store.writer.write { db in
                try db.execute(sql: "UPDATE cairn_events SET error = 'cancelled: the sync was cancelled' WHERE id = (SELECT MAX(id) FROM cairn_events)")
            }
            #expect(try alice.history().first?.error?.hasPrefix("cancelled:") == true)
            let report = try await alice.diagnostics()
            #expect(report.verdict == .upToDate, "\(report.explanation)")

            // With a change still waiting, the older failure is still the store's state.
            try alice.save("notes", id: "waiting", data: ["title": "not uploaded"])
            #expect(try await alice.diagnostics().verdict == .retrying)
        }
    }
}
