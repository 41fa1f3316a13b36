import CairnProtocol
@testable import CairnServer
import CairnTesting
import Foundation
import Logging
import PostgresNIO
import Synchronization
import Testing

/// The server's timers wait on its injected clock: the purge runs when the test moves time, not after a real wait.
@Suite("Server timers")
struct TimerTests {
    @Test("the purge timer runs on the injected clock and purges by the wall clock's horizons")
    func purgeTimer() async throws {
        let wall = ManualWallClock()
        let timers = ManualClock()
        let server = try await EmbeddedServer.start(clock: wall, timers: timers) { configuration in
            configuration.purgeInterval = 600
            configuration.tombstoneRetention = 86400
        }
        try await withCleanup({ await server.stop() }) {
            try await server.setUp(project: "field", schema: Fixture.schema)
            try await server.addUser("alice", password: TestServer.password, role: .writer, project: "field")
            let http = TestHTTPClient(baseURL: server.baseURL)
            let token = try await http.login("alice").accessToken
            for operation in [
                SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .create, data: ["title": "a"]),
                SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .delete),
            ] {
                let reply = try await http.send(.POST, "/v1/projects/field/batch", token: token, value: BatchRequest(operations: [operation]))
                #expect(reply.status == 200)
            }
            func purgedThrough() async throws -> Int64 {
                try await server.server.storage.feedRange(
                    project: "field", collection: Fixture.schema.collection(named: "notes")!, since: 0, snapshotHigh: nil, limit: 10, filter: nil).purgedThrough
            }
            // The purge timer waits (beside the webhook outbox's poll); moving the wall clock alone purges nothing.
            await timers.waitForSleepers(2)
            wall.advance(by: 2 * 86400)
            #expect(try await purgedThrough() == 0)
            // One interval later the purge has run, and both timers wait again.
            let sleepsBefore = timers.totalSleeps
            timers.advance(by: .seconds(600))
            await timers.waitForSleepers(2)
            #expect(timers.totalSleeps >= sleepsBefore + 2)
            #expect(try await purgedThrough() == 2)
        }
    }

    @Test("a notice channel that fails is reconnected after the relay's delay on the injected clock")
    func noticeRelayReconnects() async throws {
        let timers = ManualClock()
        let channel = FailingOnceChannel()
        let notifier = ChangeNotifier(channel: channel)
        var notices = await notifier.subscribe(project: "field").makeAsyncIterator()
        let relay = NoticeRelay(channel: channel, notifier: notifier, logger: Logger(label: "test"), timers: timers)
        let running = Task { try await relay.run() }
        defer { running.cancel() }
        // The first attempt failed; the relay waits on the clock, not in real time.
        await timers.waitForSleepers(1)
        #expect(channel.attempts == 1)
        timers.advance(by: NoticeRelay.reconnectDelay)
        #expect(await notices.next() == ChangeNotice(collection: "notes", version: 7))
        #expect(channel.attempts == 2)
    }

    @Test("a PostgreSQL lease that gets no connection fails with unavailable once the injected clock passes its timeout")
    func postgresLeaseTimeout() async throws {
        let timers = ManualClock()
        // Nothing listens on port 1; without `run()` the client's pool never connects either.
        let client = PostgresClient(configuration: .init(host: "127.0.0.1", port: 1, username: "cairn", password: nil, database: "cairn", tls: .disable))
        let pool = PostgresPool(client, maximum: 1, leaseTimeout: .seconds(10), timers: timers)
        let lease = Task { try await pool.withConnection { _ in 1 } }
        await timers.waitForSleepers(1)
        timers.advance(by: .seconds(9))
        #expect(timers.sleeperCount == 1)
        timers.advance(by: .seconds(1))
        await #expect(throws: ErrorBody.self) { _ = try await lease.value }
        do { _ = try await lease.value } catch let error as ErrorBody { #expect(error.code == .unavailable) }
    }
}

/// A notice channel whose first `receive` fails and whose second delivers one notice, then listens until cancelled.
private final class FailingOnceChannel: NoticeChannel {
    private let count = Mutex(0)
    var attempts: Int { count.withLock { $0 } }

    func broadcast(project: String, changes: [String: Int64]) async throws {}

    func receive(_ deliver: @escaping @Sendable (String, [String: Int64]) async -> Void) async throws {
        let attempt = count.withLock { count in
            count += 1
            return count
        }
        guard attempt > 1 else { throw ErrorBody(code: .unavailable, message: "the channel broke") }
        await deliver("field", ["notes": 7])
        try await Task.sleep(for: .seconds(3600))
    }
}
