import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Synchronization
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

/// A transport that lets the first `passing` batch (or changes) requests through, then holds each later one until the
/// test calls ``release()``: a sync stops at a known point, however fast or slow the machine is.
final class GatedSyncTransport: HTTPTransport, Sendable {
    let inner = TestTransport.make()
    private let path: String
    private let state: Mutex<State>

    private struct State {
        var passing: Int
        var open = false
        var held: [CheckedContinuation<Void, Never>] = []
    }

    /// Holds the requests whose path ends with `path` after the first `passing` of them.
    init(holding path: String, after passing: Int) {
        self.path = path
        state = Mutex(State(passing: passing))
    }

    /// How many requests are held now.
    var heldCount: Int { state.withLock { $0.held.count } }

    /// Lets the held requests go on, and every later one through.
    func release() {
        let held = state.withLock { state in
            state.open = true
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    private func gate(_ request: TransportRequest) async {
        guard request.url.path.hasSuffix(path) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let pass = state.withLock { state in
                if state.open || state.passing > 0 {
                    state.passing -= 1
                    return true
                }
                state.held.append(continuation)
                return false
            }
            if pass { continuation.resume() }
        }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        await gate(request)
        return try await inner.send(request)
    }

    func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
        try await inner.stream(request)
    }

    func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
        try await inner.download(request, to: destination)
    }
}

/// Holds the cancellations to a known point of the run with ``GatedSyncTransport``, not to a moment of real time: no
/// wait here gives up, and the time limit is the only safety net.
@Suite("cancelUpload and cancelDownload", .timeLimit(.minutes(20)))
struct CancelTests {
    @Test("cancelDownload stops the running pull for its starter and a joiner at a page boundary, keeping the pages applied")
    func cancelDownload() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice") { $0.batchSize = 200 }
            for index in 0..<200 { try alice.create("notes", id: String(format: "n-%03d", index), data: ["title": "x"]) }
            try await alice.sync()
            // Two pages of ten pass; the third page's request waits for the test.
            let gate = GatedSyncTransport(holding: "/changes", after: 2)
            let bob = try await fixture.client("bob", network: SwitchableTransport(inner: gate)) {
                $0.pageSize = 10
                $0.adaptsPageSize = false
                // Page by page: the gate counts and holds page requests.
                $0.streamsPages = false
            }

            let starter = Task { try await bob.pull(["notes"]) }
            try await waitUntil {
                let applied = await bob.status().collections["notes"]?.appliedRecords ?? 0
                return gate.heldCount >= 1 && applied >= 20
            }
            let joining = Mutex(false)
            let joiner = Task {
                joining.withLock { $0 = true }
                return try await bob.pull(["notes"])
            }
            try await waitUntil { joining.withLock { $0 } }
            #expect(await bob.cancelDownload())
            gate.release()
            for task in [starter, joiner] {
                let error = await #expect(throws: CairnError.self) { try await task.value }
                #expect(error?.code == .cancelled)
            }
            let kept = try bob.count(Query("notes"))
            // Two pages applied before the cancel; at most the third, asked for already (held), is applied after it.
            #expect(kept == 20 || kept == 30, "whole pages only, none asked for after the cancel: \(kept)")
            // The next pull goes on from the last page applied.
            #expect(try await bob.pull(["notes"]).pulled == 200 - kept)
            #expect(try await bob.verify("notes").matches)
            #expect(await bob.cancelDownload() == false, "nothing runs now")
        }
    }

    @Test("cancelUpload stops the running push before its next batch: what was sent is recorded, the rest stays queued, nothing applies twice")
    func cancelUpload() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            // Three batches of ten pass; the fourth (and the fifth, two are in flight) waits for the test.
            let gate = GatedSyncTransport(holding: "/batch", after: 3)
            let alice = try await fixture.client("alice", network: SwitchableTransport(inner: gate)) { $0.batchSize = 10 }
            for index in 0..<200 { try alice.create("notes", id: String(format: "n-%03d", index), data: ["title": "x"]) }

            let starter = Task { try await alice.push() }
            try await waitUntil { gate.heldCount >= 1 && (try? alice.pendingOperations().count) ?? 200 <= 170 }
            let joining = Mutex(false)
            let joiner = Task {
                joining.withLock { $0 = true }
                return try await alice.push()
            }
            try await waitUntil { joining.withLock { $0 } }
            #expect(await alice.cancelUpload())
            gate.release()
            for task in [starter, joiner] {
                let error = await #expect(throws: CairnError.self) { try await task.value }
                #expect(error?.code == .cancelled)
            }
            let waiting = try alice.pendingOperations().count
            let onServer = try await fixture.pullAll("rita", "notes").changes.count
            // Three batches were recorded before the cancel; at most the two in flight then (held) are recorded after it,
            // and no later one is sent.
            #expect(waiting >= 150 && waiting <= 170, "\(waiting) waiting")
            #expect(onServer == 200 - waiting, "every answered batch recorded: \(onServer) on the server, \(waiting) waiting")
            #expect(try await alice.push().pushed == waiting)
            #expect(try await fixture.pullAll("rita", "notes").changes.count == 200)
        }
    }

    @Test("cancelling one caller's task detaches that caller only: the run goes on for the others")
    func detachOneCaller() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            // One batch of ten passes; the second waits until the joiner was cancelled.
            let gate = GatedSyncTransport(holding: "/batch", after: 1)
            let alice = try await fixture.client("alice", network: SwitchableTransport(inner: gate)) { $0.batchSize = 10 }
            for index in 0..<60 { try alice.create("notes", id: "n-\(index)", data: ["title": "x"]) }
            let starter = Task { try await alice.push() }
            try await waitUntil { gate.heldCount >= 1 }
            let joining = Mutex(false)
            let joiner = Task {
                joining.withLock { $0 = true }
                return try await alice.push()
            }
            try await waitUntil { joining.withLock { $0 } }
            joiner.cancel()
            gate.release()
            _ = await joiner.result
            #expect(try await starter.value.pushed == 60)
            #expect(try alice.pendingOperations().isEmpty)
        }
    }
}

@Suite("Progress with the time left")
struct TransferEstimateTests {
    @Test("a pull's status shows records applied of the snapshot's total and a time left; a push's, operations of the queue")
    func estimates() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
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

            let bob = try await fixture.client("bob", network: SwitchableTransport(inner: SlowSyncTransport())) {
                $0.pageSize = 10
                $0.adaptsPageSize = false
            }
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
}
