import Cairn
import CairnLinkShaping
import CairnProtocol
import Foundation
import Synchronization

/// A first sync through a shaped link (bandwidth, latency): the bytes it moves each way, its time, and the time the
/// link itself needs for those bytes, with compression on and off in the same run, alternating round by round.
struct NetworkBenchmark {
    let records: Int
    let link: LinkProfile
    let rounds: Int
    var text: RecordText = .notes
    let log: (String) -> Void
    let password = UUID().uuidString

    /// What the records' text is like: how well it compresses decides whether a sync waits on bytes or on round trips.
    enum RecordText: String, CaseIterable, Sendable {
        /// Field notes drawn from a vocabulary, as real notes vary (about 500 bytes a record).
        case notes
        /// A 350-character body repeating one sentence: compresses twenty to one and more.
        case compressible
        /// A 350-character body of random letters: compresses little.
        case random
    }

    /// Words of field notes: records of about 500 bytes whose text varies as real notes do (the `cairn bench sync`
    /// record repeats one sentence and compresses thirty to one, which no real data does).
    static let words = """
        inspected replaced checked cleaned tested adjusted reported missing damaged worn loose leaking cracked \
        corroded blocked noisy hot cold wet dry pump valve filter belt motor panel cable fuse switch sensor gauge \
        door window roof floor wall stair exit sign alarm extinguisher sprinkler hose ladder scaffold crane forklift \
        truck trailer pallet shelf rack bin label seal lock key badge log permit report photo north south east west \
        upper lower left right front rear inner outer main spare backup temporary new old first second third \
        morning noon evening night shift crew team site zone bay dock yard gate office storeroom workshop plant \
        tank pipe duct fan heater chiller boiler meter breaker transformer generator battery charger light lamp
        """.split(whereSeparator: \.isWhitespace).map(String.init)

    /// One record of 7 typed fields: a title, a body of `text`'s kind, numbers, a flag, a date, tags.
    static func record(_ index: Int, text: RecordText) -> [String: JSONValue] {
        var random = SplitMix(seed: UInt64(index) &* 2_654_435_761 &+ 17)
        let body: String
        switch text {
        case .notes:
            body = (0..<(40 + random.next(below: 31))).map { _ in words[random.next(below: words.count)] }.joined(separator: " ")
        case .compressible:
            body = String(String(repeating: "Checked the pump, valve and filter; all within limits. ", count: 7).prefix(350))
        case .random:
            let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ")
            body = String((0..<350).map { _ in letters[random.next(below: letters.count)] })
        }
        return [
            "title": .string("Inspection \(index) at site \(random.next(below: 5000))"), "body": .string(body),
            "count": .integer(Int64(random.next(below: 1_000_000))), "score": .number(Double(random.next(below: 100_000)) / 100),
            "done": .bool(random.next(below: 2) == 0), "due": .string("2026-\(10 + random.next(below: 3))-\(10 + random.next(below: 18))T10:00:00.000Z"),
            "tags": .array((0..<(1 + random.next(below: 3))).map { _ in .string(words[random.next(below: words.count)]) }),
        ]
    }

    /// One first sync's figures.
    struct Sample {
        var seconds: Double
        var bytesDown: Int64
        var bytesUp: Int64
        var requests: Int
        var pages: Int
        /// Pages that started a collection's feed: asked for after the requests before them, not overlapped.
        var firstPages: Int
        var connections: Int
    }

    /// The runs of a round: through the shaped link with gzip and without, and through the same relay unshaped (gzip):
    /// the yardstick of what the sync itself needs when the link costs nothing.
    enum Run: CaseIterable {
        case gzip, plain, relay
        var compressed: Bool { self != .plain }
        var name: String {
            switch self {
            case .gzip: "gzip "
            case .plain: "plain"
            case .relay: "relay"
            }
        }
    }

    func run() async throws -> [String: JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-bench-network-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await SyncBenchmark.startServer(in: directory, users: ["bench"], password: password)
        defer { server.stop() }
        let http = RawHTTP(baseURL: server.baseURL)
        let token = try await http.login("bench", password: password)
        let text = text
        try await SyncBenchmark.pushRaw(
            http, token: token, records: records, batchSize: 1000, collection: "items", record: { Self.record($0, text: text) })
        // The snapshot's pages as plain JSON, 5000 records each (the size the SDK asked for before pages of 2000).
        let plainBytes = try await SyncBenchmark.pullRaw(http, token: token, records: records, pageSize: 5000, collection: "items")
        log("link \(link); \(records) records of \(text.rawValue) text, \(plainBytes) bytes as plain JSON pages of 5000")

        var samples: [Run: [Sample]] = [:]
        for round in 0..<rounds {
            // Alternating which goes first, so neither always meets a warmer machine.
            for run in round % 2 == 0 ? Run.allCases : Run.allCases.reversed() {
                let sample = try await firstSync(server: server, directory: directory, run: run, round: round)
                samples[run, default: []].append(sample)
                log(String(format: "round %d %@: %.2f s, %d bytes down, %d up, link time %.2f s", round + 1, run.name,
                           sample.seconds, sample.bytesDown, sample.bytesUp, linkSeconds(sample)))
            }
        }
        let roundTrip = BenchTiming.seconds(link.roundTrip)
        let relay = Self.median(samples[.relay] ?? [])
        var figures: [String: JSONValue] = [
            "records": .integer(Int64(records)), "link": .string(link.description), "text": .string(text.rawValue),
            "plainJSONBytes": .integer(plainBytes), "rounds": .integer(Int64(rounds)),
            "relaySeconds": .number(BenchTiming.rounded(relay.seconds)), "roundTripSeconds": .number(roundTrip),
        ]
        for run in [Run.gzip, .plain] {
            let median = Self.median(samples[run] ?? [])
            let ideal = idealSeconds(median)
            let linkTime = linkSeconds(median)
            // The target: the sync through the link takes at most 1.3 times what the relay alone or the bytes alone
            // need, plus 5 round trips.
            let bound = 1.3 * max(relay.seconds, linkTime) + 5 * roundTrip
            figures[run == .gzip ? "gzip" : "plain"] = .object([
                "seconds": .number(BenchTiming.rounded(median.seconds)), "idealSeconds": .number(BenchTiming.rounded(ideal)),
                "timeToIdeal": .number(BenchTiming.rounded(median.seconds / ideal)),
                "linkSeconds": .number(BenchTiming.rounded(linkTime)), "boundSeconds": .number(BenchTiming.rounded(bound)),
                "timeToBound": .number(BenchTiming.rounded(median.seconds / bound)),
                "timeToRelay": .number(BenchTiming.rounded(median.seconds / relay.seconds)),
                "bytesDown": .integer(median.bytesDown), "bytesUp": .integer(median.bytesUp),
                "wireToPlainJSON": .number(BenchTiming.rounded(Double(median.bytesDown) / Double(plainBytes))),
                "requests": .integer(Int64(median.requests)), "pages": .integer(Int64(median.pages)),
                "connections": .integer(Int64(median.connections)),
            ])
            log(String(format: "%@ median of %d: %.2f s for %d bytes down (%.3f of the plain JSON); the relay unshaped %.2f s, the link needs %.2f s; bound 1.3 x max + 5 round trips = %.2f s: %.2fx of it",
                       run.name, samples[run]?.count ?? 0, median.seconds, median.bytesDown, Double(median.bytesDown) / Double(plainBytes),
                       relay.seconds, linkTime, bound, median.seconds / bound))
        }
        return figures
    }

    static func median(_ runs: [Sample]) -> Sample { runs.sorted { $0.seconds < $1.seconds }[runs.count / 2] }

    /// The link's time for the bytes a sync moved, each way at its rate.
    func linkSeconds(_ sample: Sample) -> Double {
        link.seconds(down: sample.bytesDown) + link.seconds(up: sample.bytesUp)
    }

    /// The time the link itself needs: every byte at its rate each way, plus the round trips the protocol cannot
    /// overlap (the first connection's handshake, each request that is not a page, each collection's first page;
    /// later pages are asked for while the one before still arrives).
    func idealSeconds(_ sample: Sample) -> Double {
        let sequential = 1 + (sample.requests - sample.pages) + sample.firstPages
        return linkSeconds(sample) + Double(sequential) * BenchTiming.seconds(link.roundTrip)
    }

    /// One first sync into a fresh store through a fresh relay (shaped, or not for ``Run/relay``): open, sign in,
    /// register, sync.
    private func firstSync(server: ServerProcess, directory: URL, run: Run, round: Int) async throws -> Sample {
        let profile = run == .relay ? LinkProfile(bitsPerSecond: 1e13, roundTrip: .zero) : link
        let shaped = try await ShapedLink.start(upstreamPort: server.port, profile: profile)
        defer { Task { await shaped.stop() } }
        let counter = CountingTransport(inner: BenchTransport.sdkDefault.make())
        let name = "network-\(round)-\(run)"
        var configuration = CairnConfiguration(
            serverURL: shaped.baseURL, project: SyncBenchmark.project, device: name,
            credentials: .password(user: "bench", password: password), store: .file(directory.appendingPathComponent("\(name).sqlite").path))
        configuration.compression = run.compressed
        configuration.requestTimeout = .seconds(600)
        let start = ContinuousClock.now
        let client = try await CairnClient.open(configuration, transport: counter)
        let pulled = try await client.sync().pulled
        let seconds = BenchTiming.seconds(since: start)
        guard pulled == records else { throw CLIError("pulled \(pulled) of \(records)") }
        let counts = counter.counts
        return Sample(seconds: seconds, bytesDown: shaped.bytesDown, bytesUp: shaped.bytesUp, requests: counts.requests, pages: counts.pages,
                      firstPages: counts.firstPages, connections: shaped.connections)
    }
}

/// Counts the requests a client makes, how many of them were pages of a changes feed, and how many of those started one.
private final class CountingTransport: HTTPTransport, Sendable {
    let inner: any HTTPTransport
    private let state = Mutex((requests: 0, pages: 0, firstPages: 0))

    init(inner: any HTTPTransport) { self.inner = inner }

    var counts: (requests: Int, pages: Int, firstPages: Int) { state.withLock { $0 } }

    private func count(_ request: TransportRequest) {
        state.withLock {
            $0.requests += 1
            guard request.url.path.hasSuffix("/changes") else { return }
            $0.pages += 1
            if !(request.url.query ?? "").contains("since=") { $0.firstPages += 1 }
        }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        count(request)
        return try await inner.send(request)
    }

    func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
        count(request)
        return try await inner.stream(request)
    }

    func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
        count(request)
        return try await inner.download(request, to: destination)
    }
}
