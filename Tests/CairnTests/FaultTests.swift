import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("A network that breaks")
struct FaultTests {
    @Test("connections cut at random points of requests and answers, hundreds of times: every operation applies exactly once and every replica verifies",
          arguments: [UInt64(7), 1234])
    func faultyNetwork(seed: UInt64) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let proxy = try await FaultProxy.start(upstreamPort: fixture.server.port, faultRate: 0.4, seed: seed)
            try await withCleanup({ await proxy.stop() }) {
                var random = SplitMix(seed: seed)
                let (transport, shutdown) = FaultProxy.freshConnectionTransport()
                try await withCleanup({ await shutdown() }) {
                    var clients: [CairnClient] = []
                    for user in ["alice", "bob", "ada"] {
                        var configuration = CairnConfiguration(
                            serverURL: proxy.baseURL, project: Fixture.project, device: user,
                            credentials: .password(user: user, password: TestServer.password), store: .inMemory)
                        configuration.retry = RetryPolicy(initialDelay: .milliseconds(2), maximumDelay: .milliseconds(20), maximumAttempts: 4)
                        configuration.batchSize = 7
                        configuration.pageSize = 9
                        var opened: CairnClient?
                        while opened == nil { opened = try? await CairnClient.open(configuration, transport: transport) }
                        clients.append(opened!)
                    }
                    var created: Set<String> = []
                    for round in 0..<30 {
                        for (index, client) in clients.enumerated() {
                            for item in 0..<3 {
                                let id = "c\(index)-r\(round)-\(item)"
                                try client.create("logs", id: id, data: ["message": .string(id)])
                                created.insert(id)
                            }
                            let shared = "shared-\(random.next(below: 4))"
                            if try client.record("notes", id: shared) == nil {
                                try client.save("notes", id: shared, data: ["title": .string("from \(index)"), "count": .integer(Int64(round))])
                            } else {
                                try client.patch("notes", id: shared, ["count": .integer(Int64(round * 10 + index))])
                            }
                            _ = try? await client.sync()
                        }
                    }
                    print("fault run \(seed): \(proxy.injected.count) faults injected over \(proxy.connections) connections")
                    #expect(proxy.injected.count >= 100, "only \(proxy.injected.count) faults")

                    proxy.faultRate = 0
                    for client in clients {
                        for _ in 0..<3 { if (try? await client.sync()) != nil { break } }
                        #expect(!client.hasPendingUpload)
                        #expect(try client.failedOperations().isEmpty)
                    }
                    for client in clients { try await client.sync() }
                    for client in clients {
                        for collection in ["notes", "logs"] {
                            let verification = try await client.verify(collection)
                            #expect(verification.matches, "\(collection): \(verification)")
                        }
                        #expect(Set(try client.records(Query("logs")).map(\.id)) == created)
                    }
                    let counts = try await fixture.server.server.storage.operationCounts(project: Fixture.project)
                    #expect(counts.head == Int64(counts.applied), "versions \(counts.head) for \(counts.applied) applied operations")
                    let first = try clients[0].records(Query("notes"))
                    for client in clients.dropFirst() { #expect(try client.records(Query("notes")).map(\.data) == first.map(\.data)) }
                }
            }
        }
    }

    @Test("a server that never answers times out with timed_out, and nothing queued is lost")
    func hangingServer() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let proxy = try await FaultProxy.start(upstreamPort: fixture.server.port, faultRate: 1, seed: 1, blackholes: true)
            try await withCleanup({ await proxy.stop() }) {
                let path = Fixture.temporaryStorePath()
                let bob = try await fixture.client("bob", store: .file(path))
                try bob.create("notes", id: "b1", data: ["title": "waiting"])
                var configuration = bob.configuration
                configuration.serverURL = proxy.baseURL
                configuration.requestTimeout = .milliseconds(300)
                configuration.retry = RetryPolicy(initialDelay: .milliseconds(1), maximumAttempts: 2)
                configuration.connectOnOpen = false
                let stuck = try await CairnClient.open(configuration)
                do {
                    try await stuck.sync()
                    Issue.record("expected a failure")
                } catch let error as CairnError {
                    #expect(error.code == .timedOut)
                    #expect(error.isRetryable)
                }
                #expect(try stuck.pendingOperations().count == 1)
                #expect(try stuck.record("notes", id: "b1")?.data == ["title": "waiting"])
                #expect(await stuck.status().lastError?.code == .timedOut)
            }
        }
    }
}
