import AsyncHTTPClient
import CairnProtocol
import CairnServer
import Foundation
import NIOCore
import Synchronization

/// How many live-notice streams one server instance holds while notices still arrive quickly: opens streams in
/// steps, and at each step times `writes` writes from the moment the batch is sent to the moment each stream
/// receives its notice. The figure is the most streams whose p99 stays under one second with none missed.
///
/// The streams run in this process, on the same machine as the server, so their reading shares its CPU: the
/// latencies include the client's own delay, and the figure is a floor.
struct EventsBenchmark {
    let postgresURL: String?
    let steps: [Int]
    let writes: Int
    let log: (String) -> Void
    let password = UUID().uuidString

    /// When each stream received each version.
    final class Arrivals: Sendable {
        let connected = Atomic<Int>(0)
        let times = Mutex<[Int64: [ContinuousClock.Instant]]>([:])

        func arrived(_ version: Int64) {
            let now = ContinuousClock.now
            times.withLock { $0[version, default: []].append(now) }
        }

        func count(_ version: Int64) -> Int { times.withLock { $0[version]?.count ?? 0 } }
    }

    func run() async throws -> [String: JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (server, project) = try await BenchServer.start(postgresURL: postgresURL, directory: directory, prefix: "events", password: password)
        defer { server.stop() }
        let http = RawHTTP(baseURL: server.baseURL)
        let token = try await http.login("bench", password: password)

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(600), concurrentHTTP1ConnectionsPerHostSoftLimit: 50_000)
        configuration.timeout = .init(connect: .seconds(30))
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let arrivals = Arrivals()
        var streams: [Task<Void, Never>] = []
        var results: [JSONValue] = []
        var best = 0
        let url = server.baseURL.absoluteString + "/v1/projects/\(project)/events"
        for target in steps {
            // Open the streams this step adds, 100 at a time (the server's listen backlog is finite).
            while streams.count < target {
                let batch = min(100, target - streams.count)
                for _ in 0..<batch { streams.append(Self.listen(client: client, url: url, token: token, arrivals: arrivals)) }
                let wanted = streams.count
                let deadline = ContinuousClock.now + .seconds(30)
                while arrivals.connected.load(ordering: .relaxed) < wanted, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            let connected = arrivals.connected.load(ordering: .relaxed)
            guard connected >= target else {
                log("\(target) streams: only \(connected) connected within 30 s; stopping")
                break
            }
            var latencies: [Double] = []
            var missed = 0
            for write in 0..<writes {
                let sent = ContinuousClock.now
                let operation: JSONValue = [
                    "opId": .string("events-\(target)-\(write)-\(UUID().uuidString)"), "collection": "items",
                    "id": .string("event-\(target)-\(write)"), "op": "create", "data": .object(SyncBenchmark.record(write)),
                ]
                let reply = try await http.send(
                    "POST", "/v1/projects/\(project)/batch", token: token, body: JSONValue.object(["operations": [operation]]).jsonData())
                guard reply.status == 200, let version = try JSONValue(parsing: reply.body)["results"]?.arrayValue?.first?["record"]?["version"]?.integerValue
                else { throw CLIError("the write answered \(reply.status)") }
                let deadline = ContinuousClock.now + .seconds(10)
                while arrivals.count(version) < target, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
                let times = arrivals.times.withLock { $0.removeValue(forKey: version) ?? [] }
                missed += target - times.count
                latencies += times.map { arrival in
                    let delay = arrival - sent
                    return Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            latencies.sort()
            let p50 = latencies.isEmpty ? .infinity : latencies[latencies.count / 2]
            let p99 = latencies.isEmpty ? .infinity : latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
            log(String(format: "%d streams: notice latency p50 %.0f ms, p99 %.0f ms, %d missed", target, p50 * 1000, p99 * 1000, missed))
            results.append(["streams": .integer(Int64(target)), "p50Milliseconds": .number((p50 * 1000).rounded()),
                            "p99Milliseconds": .number((p99 * 1000).rounded()), "missed": .integer(Int64(missed))])
            guard p99 < 1, missed == 0 else { break }
            best = target
        }
        for stream in streams { stream.cancel() }
        try? await client.shutdown()
        log("most streams with a p99 under 1 s and none missed: \(best)")
        return ["backend": .string(postgresURL == nil ? "sqlite" : "postgres"), "steps": .array(results),
                "maxStreamsUnderOneSecondP99": .integer(Int64(best))]
    }

    /// One stream, counting its greeting and noting each notice's arrival.
    static func listen(client: HTTPClient, url: String, token: String, arrivals: Arrivals) -> Task<Void, Never> {
        Task {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            guard let response = try? await client.execute(request, timeout: .hours(1)), response.status == .ok else { return }
            var reader = ServerSentEvents()
            do {
                for try await chunk in response.body {
                    for event in reader.feed(chunk.readableBytesView) {
                        if event.comments.contains("connected") { arrivals.connected.add(1, ordering: .relaxed) }
                        if let data = event.data, let version = try? JSONValue(parsing: Array(data.utf8))["version"]?.integerValue {
                            arrivals.arrived(version)
                        }
                    }
                }
            } catch {}
        }
    }
}
