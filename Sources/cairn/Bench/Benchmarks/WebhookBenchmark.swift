import CairnProtocol
import CairnServer
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// What a webhook costs the writers, and how soon a change reaches its receiver: `cairn serve` on a fresh data
/// directory, raw HTTP pushes of `records` records, in rounds alternating between no webhook and one webhook posting
/// to a receiver in this process (its yardstick: the rounds without it, in the same run); then single-record pushes
/// timed from the push being sent to the receiver holding the change, beside the push's own round trip.
struct WebhookBenchmark {
    let records: Int
    let batchSize: Int
    let rounds: Int
    let latencySamples: Int
    let log: (String) -> Void
    let password = UUID().uuidString
    static let secret = "bench-webhook-secret-0123456789"

    /// The receiver's side: when each delivered version arrived.
    final class Arrivals: Sendable {
        let versions = Mutex<[Int64: ContinuousClock.Instant]>([:])
        let delivered = Atomic<Int>(0)

        func arrived(_ body: JSONValue) {
            let now = ContinuousClock.now
            let items = body["deliveries"]?.arrayValue ?? []
            versions.withLock { for item in items { if let version = item["version"]?.integerValue { $0[version] = now } } }
            delivered.add(items.count, ordering: .relaxed)
        }

        func arrival(of version: Int64) -> ContinuousClock.Instant? { versions.withLock { $0[version] } }
    }

    func run() async throws -> [String: JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let admin = ServerAdmin(storage: try ServerBackend.sqlite(dataDirectory: directory).openNow().storage)
        let collections = (0..<(2 * rounds)).map { "round_\($0)" } + ["latency"]
        try await admin.addProject(SyncBenchmark.project)
        try await admin.setSchema(
            project: SyncBenchmark.project,
            Schema(collections: collections.map { CollectionSchema(name: $0, fields: SyncBenchmark.fields) }))
        try await admin.addUser("bench", password: password)
        try await admin.grant(user: "bench", project: SyncBenchmark.project, role: .writer)
        let server = try ServerProcess(dataDirectory: directory)
        defer { server.stop() }
        let arrivals = Arrivals()
        let receiver = try await Self.startReceiver(arrivals)
        defer { receiver.task.cancel() }
        let http = RawHTTP(baseURL: server.baseURL)
        let token = try await http.login("bench", password: password)

        var plain: [Double] = [], hooked: [Double] = []
        for round in 0..<(2 * rounds) {
            let withWebhook = round % 2 == 1
            let collection = "round_\(round)"
            if withWebhook {
                try await admin.addWebhook(
                    NewWebhookRequest(name: "bench", url: receiver.url, collections: [collection], secret: Self.secret),
                    project: SyncBenchmark.project)
            }
            let before = arrivals.delivered.load(ordering: .relaxed)
            let start = ContinuousClock.now
            try await SyncBenchmark.pushRaw(http, token: token, records: records, batchSize: batchSize, collection: collection)
            let rate = Double(records) / BenchTiming.seconds(since: start)
            if withWebhook { hooked.append(rate) } else { plain.append(rate) }
            log(String(format: "round %d, %@: %.0f pushed records/s", round + 1, withWebhook ? "one webhook" : "no webhook", rate))
            if withWebhook {
                // Every record of the round reaches the receiver before the webhook goes.
                while arrivals.delivered.load(ordering: .relaxed) < before + records { try await Task.sleep(for: .milliseconds(20)) }
                log(String(format: "  all %d delivered %.2f s after the round began", records, BenchTiming.seconds(since: start)))
                try await admin.removeWebhook(name: "bench", project: SyncBenchmark.project)
            }
        }

        try await admin.addWebhook(
            NewWebhookRequest(name: "latency", url: receiver.url, collections: ["latency"], secret: Self.secret), project: SyncBenchmark.project)
        var latencies: [Double] = [], pushes: [Double] = []
        for sample in 0..<latencySamples {
            let operation: JSONValue = [
                "opId": .string("latency-\(sample)"), "collection": "latency", "id": .string("latency-\(sample)"), "op": "create",
                "data": .object(SyncBenchmark.record(sample)),
            ]
            let sent = ContinuousClock.now
            let reply = try await http.send(
                "POST", "/v1/projects/\(SyncBenchmark.project)/batch", token: token, body: JSONValue.object(["operations": [operation]]).jsonData())
            let answered = ContinuousClock.now
            guard reply.status == 200, let version = try JSONValue(parsing: reply.body)["results"]?.arrayValue?.first?["record"]?["version"]?.integerValue
            else { throw CLIError("the push answered \(reply.status)") }
            while arrivals.arrival(of: version) == nil { try await Task.sleep(for: .microseconds(200)) }
            let arrived = arrivals.arrival(of: version)!
            latencies.append(Self.milliseconds(arrived - sent))
            pushes.append(Self.milliseconds(answered - sent))
        }
        let median = { (samples: [Double]) in samples.sorted()[samples.count / 2] }
        let p90 = { (samples: [Double]) in samples.sorted()[min(samples.count - 1, samples.count * 9 / 10)] }
        let ratio = median(hooked) / median(plain)
        log(String(format: "push with one webhook: %.0f records/s against %.0f with none (medians of %d rounds each, alternating): %.3f×",
                   median(hooked), median(plain), rounds, ratio))
        log(String(format: "push to delivery: median %.1f ms, p90 %.1f ms (the push's own round trip: median %.1f ms), %d samples",
                   median(latencies), p90(latencies), median(pushes), latencySamples))
        return [
            "pushRecordsPerSecondNoWebhook": .number(median(plain).rounded()),
            "pushRecordsPerSecondOneWebhook": .number(median(hooked).rounded()),
            "webhookPushRatio": .number(BenchTiming.rounded(ratio)),
            "pushToDeliveryMedianMilliseconds": .number(BenchTiming.rounded(median(latencies))),
            "pushToDeliveryP90Milliseconds": .number(BenchTiming.rounded(p90(latencies))),
            "pushRoundTripMedianMilliseconds": .number(BenchTiming.rounded(median(pushes))),
        ]
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// A receiver on a free loopback port that accepts every delivery.
    static func startReceiver(_ arrivals: Arrivals) async throws -> (url: String, task: Task<Void, any Error>) {
        let router = Router()
        router.post("hook") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 64 << 20)
            arrivals.arrived((try? JSONValue(parsing: Array(buffer: bytes))) ?? .null)
            return Response(status: .ok)
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) },
            logger: Logger(label: "bench-receiver") { _ in SwiftLogNoOpLogHandler() })
        let task = Task { try await application.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else { throw CLIError("the bench's receiver did not start") }
        return ("http://127.0.0.1:\(port)/hook", task)
    }
}
