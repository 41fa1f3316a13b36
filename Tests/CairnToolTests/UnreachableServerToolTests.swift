import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("cairn sync against a server that is not there", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"))
struct UnreachableServerToolTests {
    @Test("a closed port fails within 5 s with the reason and a non-zero exit, and the queued change survives")
    func closedPort() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let store = Fixture.temporaryStorePath()
            let password = ["CAIRN_PASSWORD": TestServer.password]
            let first = try await Tool.run(
                ["sync", "--store", store, "--server", fixture.server.baseURL.absoluteString, "--project", Fixture.project, "--user", "alice"],
                environment: password)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(try await Tool.run(["put", "--store", store, "notes", "n1", #"{"title": "offline"}"#]).status == 0)

            await fixture.server.embedded.stopListening()
            // What starting the tool and opening the store cost on this machine right now (tests run in parallel): the
            // closed port itself must cost less than 5 s on top.
            let overhead = try await Self.timed { try await Tool.run(["query", "--store", store, "SELECT 1"]) }.elapsed
            let (offline, elapsed) = try await Self.timed { try await Tool.run(["sync", "--store", store], environment: password) }
            #expect(offline.status != 0)
            #expect(offline.stderr.contains("network_unavailable"), "\(offline.stderr)")
            #expect(offline.stderr.contains("could not be reached"), "\(offline.stderr)")
            #expect(elapsed - overhead < .seconds(5), "cairn sync took \(elapsed) against a closed port (a query took \(overhead))")

            try await fixture.server.embedded.startListening()
            let back = try await Tool.run(["sync", "--store", store], environment: password)
            #expect(back.status == 0, "\(back.stderr)")
            #expect(back.stdout.contains("pushed 1"), "\(back.stdout)")
        }
    }

    @Test("a first sync against a closed port says why it cannot start")
    func neverSynced() async throws {
        let store = Fixture.temporaryStorePath()
        let overhead = try await Self.timed { try await Tool.run(["query", "--store", Fixture.temporaryStorePath(), "SELECT 1"]) }.elapsed
        // The port stays held (bound, not listening) while the tool runs: no server of the parallel suite can take it.
        let (output, elapsed) = try await withClosedLoopbackPort { port in
            try await Self.timed {
                try await Tool.run(
                    ["sync", "--store", store, "--server", "http://127.0.0.1:\(port)", "--project", "field", "--user", "alice"],
                    environment: ["CAIRN_PASSWORD": "anything"])
            }
        }
        #expect(output.status != 0)
        #expect(output.stderr.contains("could not be reached"), "\(output.stderr)")
        #expect(elapsed - overhead < .seconds(5), "cairn sync took \(elapsed) against a closed port (a query took \(overhead))")
    }

    /// Runs `body` and measures how long it took.
    static func timed<T>(_ body: () async throws -> T) async throws -> (value: T, elapsed: Duration) {
        let start = ContinuousClock.now
        let value = try await body()
        return (value, ContinuousClock.now - start)
    }
}
