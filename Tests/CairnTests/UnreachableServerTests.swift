import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

/// Real network cuts: a closed listener and a port that never answers. Only a lower bound is checked on real time
/// (a busy machine can only make a wait longer); how long a user waits is not asserted here.
@Suite("An unreachable server fails fast and keeps the queue")
struct UnreachableServerTests {
    @Test("a refused connection fails with network_unavailable, retries included, and the queue stays")
    func refused() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            // The default retry policy, as users get it.
            let alice = try await fixture.client("alice", store: .file(path), network: nil) { $0.retry = RetryPolicy() }
            try alice.save("notes", id: "n1", data: ["title": "before"])
            try await alice.sync()

            await fixture.server.embedded.stopListening()
            try alice.save("notes", id: "n2", data: ["title": "offline"])
            let error = await #expect(throws: CairnError.self) { try await alice.sync() }
            #expect(error?.code == .networkUnavailable)
            #expect(error?.isRetryable == true)
            #expect(error?.message.contains("connection refused") == true, "\(String(describing: error))")
            #expect(try alice.pendingOperations().map(\.recordID) == ["n2"])

            try await fixture.server.embedded.startListening()
            #expect(try await alice.sync().pushed == 1)
            #expect(try alice.pendingOperations().isEmpty)
        }
    }

    #if canImport(Glibc)
    @Test("a connection attempt that gets no answer fails after the configured connect timeout, without retrying in place")
    func unanswered() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let online = try await fixture.client("alice", store: .file(path), network: nil)
            try await online.sync()

            let silent = try UnansweredPort()
            defer { silent.close() }
            let alice = try await fixture.client("alice", store: .file(path), network: nil) { configuration in
                configuration.serverURL = silent.url
                configuration.connectOnOpen = false
                configuration.connectTimeout = .milliseconds(600)
                configuration.retry = RetryPolicy()
            }
            try alice.save("notes", id: "n1", data: ["title": "queued"])
            let start = ContinuousClock.now
            let error = await #expect(throws: CairnError.self) { try await alice.sync() }
            let elapsed = ContinuousClock.now - start
            #expect(error?.code == .networkUnavailable)
            #expect(elapsed >= .milliseconds(500), "failed before the connect timeout: \(elapsed)")
            #expect(try alice.pendingOperations().map(\.recordID) == ["n1"])
        }
    }
    #endif
}
