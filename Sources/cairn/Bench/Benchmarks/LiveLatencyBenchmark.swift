import Cairn
import CairnProtocol
import Foundation

/// Measures how long a write on one client takes to arrive on another when both run their scheduler
/// (``CairnClient/run()``) against `cairn serve` on loopback: push after the delay, live notice, pull.
struct LiveLatencyBenchmark {
    let writes: Int
    let pushDelay: Duration
    let log: (String) -> Void

    func run() async throws -> [String: JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-live-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let password = UUID().uuidString
        let server = try await SyncBenchmark.startServer(in: directory, users: ["writer", "reader"], password: password)
        defer { server.stop() }
        func client(_ user: String) async throws -> CairnClient {
            var configuration = CairnConfiguration(
                serverURL: server.baseURL, project: SyncBenchmark.project, device: user,
                credentials: .password(user: user, password: password), store: .file(directory.appendingPathComponent("\(user).sqlite").path))
            configuration.scheduling = SchedulingPolicy(pushDelay: pushDelay, interval: nil)
            return try await CairnClient.open(configuration)
        }
        let writer = try await client("writer"), reader = try await client("reader")
        let runs = [Task { await writer.run() }, Task { await reader.run() }]
        defer { for run in runs { run.cancel() } }
        // Both live connections open and idle before the clock starts.
        for client in [writer, reader] {
            let start = ContinuousClock.now
            while ContinuousClock.now - start < .seconds(10) {
                let scheduler = await client.status().scheduler
                if scheduler.liveConnected && scheduler.phase == .idle { break }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        var latencies: [Double] = []
        for index in 0..<writes {
            let start = ContinuousClock.now
            try writer.save("items", id: "live-\(index)", data: SyncBenchmark.record(index))
            while try reader.record("items", id: "live-\(index)") == nil {
                guard ContinuousClock.now - start < .seconds(30) else { throw CLIError("write \(index) did not arrive within 30 s") }
                try await Task.sleep(for: .milliseconds(1))
            }
            latencies.append(BenchTiming.seconds(since: start) * 1000)
        }
        let sorted = latencies.sorted()
        let median = sorted[sorted.count / 2], p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        log(String(format: "%d writes, push delay %@: write to arrival on the other client, median %.1f ms, p99 %.1f ms, longest %.1f ms",
                   writes, "\(pushDelay)", median, p99, sorted.last ?? 0))
        return [
            "writes": .integer(Int64(writes)), "pushDelayMilliseconds": .number(Double(pushDelay.components.seconds * 1000) + Double(pushDelay.components.attoseconds) / 1e15),
            "liveLatencyMedianMilliseconds": .number(BenchTiming.rounded(median)), "liveLatencyP99Milliseconds": .number(BenchTiming.rounded(p99)),
        ]
    }
}
