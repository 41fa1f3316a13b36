import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
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
        defer { Task { await server.stop() } }
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
        // The timer waits; moving the wall clock alone purges nothing.
        await timers.waitForSleepers(1)
        wall.advance(by: 2 * 86400)
        #expect(try await purgedThrough() == 0)
        // One interval later the purge has run, and the timer waits again.
        timers.advance(by: .seconds(600))
        #expect(timers.sleeperCount == 0)
        await timers.waitForSleepers(1)
        #expect(try await purgedThrough() == 2)
    }
}
