import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

/// A transport that holds each batch and changes request a moment, so a sync has time to be cancelled halfway.
final class SlowSyncTransport: HTTPTransport {
    let inner = TestTransport.make()

    private func pause(_ request: TransportRequest) async throws {
        let path = request.url.path
        if path.hasSuffix("/batch") || path.hasSuffix("/changes") { try await Task.sleep(for: .milliseconds(40)) }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await pause(request)
        return try await inner.send(request)
    }

    func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
        try await inner.stream(request)
    }

    func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
        try await inner.download(request, to: destination)
    }
}

@Suite("cancelUpload and cancelDownload")
struct CancelTests {
    /// Waits until `condition` holds, looking every 5 ms for at most 10 seconds.
    static func waitUntil(_ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try await !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    }

    @Test("cancelDownload stops the running pull for its starter and a joiner at a page boundary, keeping the pages applied")
    func cancelDownload() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
        let alice = try await fixture.client("alice") { $0.batchSize = 200 }
        for index in 0..<200 { try alice.create("notes", id: String(format: "n-%03d", index), data: ["title": "x"]) }
        try await alice.sync()
        let bob = try await fixture.client("bob", network: SwitchableTransport(inner: SlowSyncTransport())) { $0.pageSize = 10 }

        let starter = Task { try await bob.pull(["notes"]) }
        try await Self.waitUntil { await bob.status().collections["notes"]?.appliedRecords ?? 0 >= 20 }
        let joiner = Task { try await bob.pull(["notes"]) }
        try await Task.sleep(for: .milliseconds(20))
        #expect(await bob.cancelDownload())
        for task in [starter, joiner] {
            let error = await #expect(throws: CairnError.self) { try await task.value }
            #expect(error?.code == .cancelled)
        }
        let kept = try bob.count(Query("notes"))
        #expect(kept >= 20 && kept < 200 && kept % 10 == 0, "whole pages only: \(kept)")
        // The next pull goes on from the last page applied.
        #expect(try await bob.pull(["notes"]).pulled == 200 - kept)
        #expect(try await bob.verify("notes").matches)
        #expect(await bob.cancelDownload() == false, "nothing runs now")
    }

    @Test("cancelUpload stops the running push before its next batch: what was sent is recorded, the rest stays queued, nothing applies twice")
    func cancelUpload() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
        let alice = try await fixture.client("alice", network: SwitchableTransport(inner: SlowSyncTransport())) { $0.batchSize = 10 }
        for index in 0..<200 { try alice.create("notes", id: String(format: "n-%03d", index), data: ["title": "x"]) }

        let starter = Task { try await alice.push() }
        try await Self.waitUntil { (try? alice.pendingOperations().count) ?? 200 <= 170 }
        let joiner = Task { try await alice.push() }
        #expect(await alice.cancelUpload())
        for task in [starter, joiner] {
            let error = await #expect(throws: CairnError.self) { try await task.value }
            #expect(error?.code == .cancelled)
        }
        let waiting = try alice.pendingOperations().count
        let onServer = try await fixture.pullAll("rita", "notes").changes.count
        #expect(waiting > 0 && waiting <= 170)
        #expect(onServer == 200 - waiting, "every answered batch recorded: \(onServer) on the server, \(waiting) waiting")
        #expect(try await alice.push().pushed == waiting)
        #expect(try await fixture.pullAll("rita", "notes").changes.count == 200)
    }

    @Test("cancelling one caller's task detaches that caller only: the run goes on for the others")
    func detachOneCaller() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
        let alice = try await fixture.client("alice", network: SwitchableTransport(inner: SlowSyncTransport())) { $0.batchSize = 10 }
        for index in 0..<60 { try alice.create("notes", id: "n-\(index)", data: ["title": "x"]) }
        let starter = Task { try await alice.push() }
        try await Task.sleep(for: .milliseconds(30))
        let joiner = Task { try await alice.push() }
        try await Task.sleep(for: .milliseconds(10))
        joiner.cancel()
        _ = await joiner.result
        #expect(try await starter.value.pushed == 60)
        #expect(try alice.pendingOperations().isEmpty)
    }
}

@Suite("Progress with the time left")
struct TransferEstimateTests {
    @Test("a pull's status shows records applied of the snapshot's total and a time left; a push's, operations of the queue")
    func estimates() async throws {
        let fixture = try await Fixture.start()
        defer { Task { await fixture.stop() } }
        let alice = try await fixture.client("alice", network: SwitchableTransport(inner: SlowSyncTransport())) { $0.batchSize = 20 }
        for index in 0..<100 { try alice.create("notes", id: String(format: "n-%03d", index), data: ["title": "x"]) }
        let uploads = Task {
            var seen: [TransferEstimate] = []
            for await status in await alice.statusUpdates() {
                if let upload = status.upload { seen.append(upload) }
                if status.phase == .idle, !seen.isEmpty { break }
            }
            return seen
        }
        try await Task.sleep(for: .milliseconds(50))
        try await alice.push()
        let pushed = await uploads.value
        #expect(pushed.allSatisfy { $0.total == 100 })
        #expect(pushed.last?.done == 100)
        #expect(pushed.contains { $0.done > 0 && $0.done < 100 && $0.timeLeft != nil })
        #expect(await alice.status().upload == nil, "no estimate once the run ended")

        let bob = try await fixture.client("bob", network: SwitchableTransport(inner: SlowSyncTransport())) { $0.pageSize = 10 }
        let downloads = Task {
            var seen: [TransferEstimate] = []
            for await status in await bob.statusUpdates() {
                if let download = status.download { seen.append(download) }
                if seen.last?.done == 100 { break }
            }
            return seen
        }
        try await Task.sleep(for: .milliseconds(50))
        try await bob.pull(["notes"])
        let pulled = await downloads.value
        let known = pulled.filter { $0.total != nil }
        #expect(known.allSatisfy { $0.total == 100 })
        #expect(known.contains { $0.done > 0 && $0.done < 100 && $0.timeLeft != nil && $0.fraction! < 1 })
        #expect(pulled.last?.remaining == 0)
    }
}
