import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Synchronization
import Testing

/// File transfers belong to the client that started them: closing it ends them, and nothing of it runs afterwards.
@Suite("Files end with their client: close() cancels uploads, downloads and prefetch", .timeLimit(.minutes(20)))
struct FileLifetimeTests {
    /// Passes requests on, but holds the uploads of bytes and the downloads of contents until their task is
    /// cancelled; counts every request, and notes the held ones that ended.
    final class HoldingTransport: HTTPTransport, Sendable {
        struct Counts {
            var requests = 0
            var holding = 0
            var released = 0
        }

        private let inner = TestTransport.make()
        private let counts = Mutex(Counts())

        var now: Counts { counts.withLock { $0 } }

        private func pass(_ request: TransportRequest, _ body: () async throws -> TransportResponse) async throws -> TransportResponse {
            counts.withLock { $0.requests += 1 }
            let path = request.url.path
            guard (request.method == "PUT" && path.hasSuffix("/upload")) || path.hasSuffix("/content") else { return try await body() }
            counts.withLock { $0.holding += 1 }
            defer { counts.withLock { $0.released += 1 } }
            try? await Task.sleep(for: .seconds(3600))
            throw CairnError(.cancelled, "held until cancelled (test)")
        }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            try await pass(request) { try await inner.send(request) }
        }

        func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
            try await inner.stream(request)
        }

        func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
            try await pass(request) { try await inner.download(request, to: destination) }
        }
    }

    /// Waits until `condition` holds (true once it does), with no deadline of its own: the suite's time limit is the
    /// safety net.
    static func eventually(_ condition: () throws -> Bool) async throws -> Bool {
        try await waitUntil { try condition() }
        return true
    }

    /// Closes `client`, then checks that no held request is left and that no request starts afterwards.
    static func closeAndCheckQuiet(_ client: CairnClient, _ network: HoldingTransport) async throws {
        try await client.close()
        let atClose = network.now
        #expect(atClose.released == atClose.holding, "a transfer still ran after close(): \(atClose)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(network.now.requests == atClose.requests, "a request started after close()")
    }

    @Test("an upload sending its bytes is cancelled by close(), which returns once it ended; it resumes on the next open")
    func uploadEndsAtClose() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let network = HoldingTransport()
            let held = try await fixture.client("alice", store: .file(path), network: SwitchableTransport(inner: network))
            let localID = try held.files.upload(from: try TestFiles.make(50_000), name: "held.bin")
            #expect(try await Self.eventually { network.now.holding == 1 })
            try await Self.closeAndCheckQuiet(held, network)

            let reopened = try await fixture.client("alice", store: .file(path), network: nil)
            #expect(try reopened.files.upload(localID)?.state == .queued)
            try await reopened.sync()
            await reopened.files.waitForUploads()
            #expect(try reopened.files.upload(localID)?.state == .completed)
        }
    }

    @Test("a download an app waits for, and the prefetch after a pull, are cancelled by close(); the waiting call throws")
    func downloadsEndAtClose() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.create("notes", id: "p1", data: ["title": "photo"])
            let local = try alice.files.upload(
                from: try TestFiles.make(100_000), attachTo: FileAttachment(collection: "notes", id: "p1", field: "photo"))
            try await alice.sync()
            await alice.files.waitForUploads()
            let id = try alice.files.serverID(local)

            // A download the app waits for.
            let network = HoldingTransport()
            let held = try await fixture.client("bob", network: SwitchableTransport(inner: network))
            let waiting = Task { try await held.files.data(for: id) }
            #expect(try await Self.eventually { network.now.holding == 1 })
            try await Self.closeAndCheckQuiet(held, network)
            await #expect(throws: CairnError.self) { try await waiting.value }

            // The prefetch a pull starts in the background.
            let prefetching = HoldingTransport()
            let carol = try await fixture.client("bob", network: SwitchableTransport(inner: prefetching)) { $0.prefetchFiles = ["notes"] }
            try await carol.sync()
            #expect(try await Self.eventually { prefetching.now.holding == 1 })
            try await Self.closeAndCheckQuiet(carol, prefetching)
        }
    }
}
