import Cairn
import CairnProtocol
import CairnServer
import Foundation

/// Measures sync against a `cairn serve` child process on loopback: the SDK's push, initial pull and incremental
/// pull, then the server alone over raw HTTP.
struct SyncBenchmark {
    let records: Int
    let batchSize: Int
    let pageSize: Int
    let log: (String) -> Void
    /// A fresh password per run for the bench's user.
    let password = UUID().uuidString

    static let project = "bench"
    static let fields: [FieldSchema] = [
        FieldSchema(name: "title", type: .string), FieldSchema(name: "body", type: .string),
        FieldSchema(name: "count", type: .integer), FieldSchema(name: "score", type: .number),
        FieldSchema(name: "done", type: .boolean), FieldSchema(name: "due", type: .datetime),
        FieldSchema(name: "tags", type: .json),
    ]
    static let schema = Schema(collections: [
        CollectionSchema(name: "items", fields: fields, conflictPolicy: .mergeFields),
        CollectionSchema(name: "raw_items", fields: fields, conflictPolicy: .mergeFields),
        // The SDK's run with gzip on the wire.
        CollectionSchema(name: "gzip_items", fields: fields, conflictPolicy: .mergeFields),
    ])

    /// One record of about 500 bytes.
    static func record(_ index: Int) -> [String: JSONValue] {
        [
            "title": .string("Inspection \(index) at site \(index % 97)"),
            "body": .string(String(repeating: "Checked the equipment, the exits and the logbook. ", count: 7)),
            "count": .integer(Int64(index)), "score": .number(Double(index % 1000) / 10), "done": .bool(index % 2 == 0),
            "due": "2026-11-22T10:00:00.000Z", "tags": ["field", "bench", .string("batch-\(index / 1000)")],
        ]
    }

    /// Sets up the bench project with `users` (writers) in `directory` and starts `cairn serve` on it.
    static func startServer(in directory: URL, users: [String], password: String, durability: String = "full") async throws -> ServerProcess {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let admin = ServerAdmin(storage: try ServerBackend.sqlite(dataDirectory: directory).openNow().storage)
        try await admin.addProject(project)
        try await admin.setSchema(project: project, schema)
        for user in users {
            try await admin.addUser(user, password: password)
            try await admin.grant(user: user, project: project, role: .writer)
        }
        return try ServerProcess(dataDirectory: directory, durability: durability)
    }

    func run() async throws -> [String: JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await Self.startServer(in: directory, users: ["bench"], password: password)
        defer { server.stop() }
        log("server pid \(server.process.processIdentifier) at \(server.baseURL)")

        var figures = try await measureSDK(server: server, directory: directory)
        figures["clientPeakRSSBytes"] = .integer(Int64(ProcessUsage.peakRSS() ?? 0))
        figures.merge(try await measureCooperativePool(server: server, directory: directory)) { $1 }
        figures.merge(try await measureServer(server: server)) { $1 }
        figures["serverPeakRSSBytes"] = .integer(Int64(server.peakRSS ?? 0))
        // The same raw push on a server that flushes at checkpoints only: the price of FULL durability, in one run.
        do {
            let relaxed = try await Self.startServer(
                in: directory.appendingPathComponent("normal"), users: ["bench"], password: password, durability: "normal")
            defer { relaxed.stop() }
            let push = try await measureServer(server: relaxed)["serverPushRecordsPerSecond"]
            log(String(format: "server with --durability normal: %.0f pushed records/s", push?.numberValue ?? 0))
            figures["serverPushRecordsPerSecondNormalDurability"] = push ?? .null
        }
        figures["records"] = .integer(Int64(records))
        // Last, so their rows in memory do not count in the client's peak.
        let (floor, grdb) = try RawInsertBenchmark(records: records, directory: directory).medians()
        figures["sqliteFloorRowsPerSecond"] = .number(floor.rounded())
        figures["rawInsertRowsPerSecond"] = .number(grdb.rounded())
        log("")
        log("each rate beside its yardsticks, measured in this run on the same rows (typed columns and the JSON, one transaction, WAL, synchronous FULL; medians of 3):")
        log(String(format: "  SQLite's C API, a prepared statement, bound values (the floor): %.0f rows/s", floor))
        log(String(format: "  GRDB, row by row: %.0f rows/s (%.2f× the floor)", grdb, grdb / floor))
        for (name, figure, ratio, rawRatio) in [
            ("initial pull", "pullRecordsPerSecond", "pullToSQLiteFloor", "pullToRawInsert"),
            ("push", "pushOpsPerSecond", "pushToSQLiteFloor", "pushToRawInsert"),
            ("initial pull, gzip on one machine", "pullGzipRecordsPerSecond", "pullGzipToSQLiteFloor", nil),
            ("push, gzip on one machine", "pushGzipOpsPerSecond", "pushGzipToSQLiteFloor", nil),
            ("server push alone", "serverPushRecordsPerSecond", "serverPushToSQLiteFloor", nil),
            ("server pull alone", "serverPullRecordsPerSecond", "serverPullToSQLiteFloor", nil),
        ] {
            let rate = figures[figure]?.numberValue ?? 0
            figures[ratio] = .number(BenchTiming.rounded(rate / floor))
            if let rawRatio { figures[rawRatio] = .number(BenchTiming.rounded(rate / grdb)) }
            log(String(format: "  %@: %.0f records/s = %.2f× the floor, %.2f× GRDB", name, rate, rate / floor, rate / grdb))
        }
        let incremental = figures["incrementalPullMilliseconds"]?.numberValue ?? 0
        log(String(format: "  incremental pull of 10 changes: %.2f ms; the floor writes 10 rows in %.3f ms", incremental, 10_000 / floor))
        log("client peak RSS \((figures["clientPeakRSSBytes"]?.integerValue ?? 0) / 1_048_576) MB, "
            + "server peak RSS \((figures["serverPeakRSSBytes"]?.integerValue ?? 0) / 1_048_576) MB")
        return figures
    }

    /// The SDK end to end, plain and then gzip on the wire: local writes, push, initial pull into a fresh store, and
    /// (plain) incremental pulls.
    ///
    /// On loopback the machine is the limit and the server shares its cores: its compression of every page then
    /// slows the client's pull, where on a real link it runs on another machine and saves transfer time. The plain
    /// run is the SDK's own speed; the gzip run, into a collection of its own, shows what compression costs when
    /// both ends share the machine (`cairn bench network` measures it over a link).
    private func measureSDK(server: ServerProcess, directory: URL) async throws -> [String: JSONValue] {
        var figures = try await measureSDK(collection: "items", compression: false, server: server, directory: directory)
        let gzip = try await measureSDK(collection: "gzip_items", compression: true, server: server, directory: directory)
        for (plain, compressed) in [
            ("pushOpsPerSecond", "pushGzipOpsPerSecond"), ("pullRecordsPerSecond", "pullGzipRecordsPerSecond"),
            ("pushClientCPUMillisecondsPer1000", "pushGzipClientCPUMillisecondsPer1000"),
            ("pushServerCPUMillisecondsPer1000", "pushGzipServerCPUMillisecondsPer1000"),
            ("pullClientCPUMillisecondsPer1000", "pullGzipClientCPUMillisecondsPer1000"),
            ("pullServerCPUMillisecondsPer1000", "pullGzipServerCPUMillisecondsPer1000"),
        ] {
            figures[compressed] = gzip[plain]
        }
        return figures
    }

    /// One run of the SDK into `collection`, with `compression` on the wire or not.
    private func measureSDK(collection: String, compression: Bool, server: ServerProcess, directory: URL) async throws -> [String: JSONValue] {
        let wire = compression ? "gzip" : "plain JSON"
        func client(_ name: String) async throws -> CairnClient {
            try await openClient(name, compression: compression, server: server, directory: directory)
        }
        let writer = try await client("writer-\(collection)")
        let writeStart = ContinuousClock.now
        for start in stride(from: 0, to: records, by: 5000) {
            try writer.writeBatch { batch in
                for index in start..<min(start + 5000, records) { try batch.save(collection, id: "item-\(index)", data: Self.record(index)) }
            }
        }
        let writeSeconds = seconds(since: writeStart)
        log(rate("\(wire): wrote locally", records, writeSeconds))

        let pushStart = ContinuousClock.now
        let pushCPU = CPUMeter(server: server)
        let pushed = try await writer.push().pushed
        let pushSeconds = seconds(since: pushStart)
        let pushCost = pushCPU.millisecondsPer1000(records)
        guard pushed == records else { throw CLIError("pushed \(pushed) of \(records)") }
        log(rate("\(wire): pushed through the SDK in batches of \(batchSize)", records, pushSeconds) + pushCost.text)

        let reader = try await client("reader-\(collection)")
        let pullStart = ContinuousClock.now
        let pullCPU = CPUMeter(server: server)
        // A reader keeps reading while the pull applies its pages: how long does it ever wait?
        let probe = ReaderProbe(client: reader, collection: collection, records: records)
        let pulled = try await reader.pull([collection]).pulled
        let readLatencies = await probe.stop()
        let pullSeconds = seconds(since: pullStart)
        let pullCost = pullCPU.millisecondsPer1000(records)
        guard pulled == records else { throw CLIError("pulled \(pulled) of \(records)") }
        log(rate("\(wire): initial pull through the SDK in pages of \(pageSize)", records, pullSeconds) + pullCost.text)
        log(String(format: "%@: a concurrent reader during the pull: %d reads, median %.3f ms, longest %.1f ms",
                   wire, readLatencies.count, readLatencies.median, readLatencies.longest))
        guard try await reader.verify(collection).matches else { throw CLIError("the reader does not match the server") }
        var figures: [String: JSONValue] = [
            "pushOpsPerSecond": .number((Double(records) / pushSeconds).rounded()),
            "pullRecordsPerSecond": .number((Double(records) / pullSeconds).rounded()),
            "pushClientCPUMillisecondsPer1000": .number(pushCost.client), "pushServerCPUMillisecondsPer1000": .number(pushCost.server),
            "pullClientCPUMillisecondsPer1000": .number(pullCost.client), "pullServerCPUMillisecondsPer1000": .number(pullCost.server),
        ]
        guard !compression else { return figures }
        figures["localWritesPerSecond"] = .number((Double(records) / writeSeconds).rounded())
        figures["pullReaderLongestMilliseconds"] = .number(BenchTiming.rounded(readLatencies.longest))
        figures["pullReaderMedianMilliseconds"] = .number(BenchTiming.rounded(readLatencies.median))

        var latencies: [Double] = []
        for round in 0..<20 {
            try writer.writeBatch { batch in
                for index in 0..<10 { try batch.patch(collection, id: "item-\((index * 7919 + round) % records)", ["count": .integer(Int64(round))]) }
            }
            try await writer.push()
            let start = ContinuousClock.now
            try await reader.pull([collection])
            latencies.append(seconds(since: start) * 1000)
        }
        let incremental = latencies.sorted()[latencies.count / 2]
        log(String(format: "incremental pull of 10 changes: median %.2f ms", incremental))
        figures["incrementalPullMilliseconds"] = .number((incremental * 100).rounded() / 100)
        return figures
    }

    /// Opens the bench user's client `name` on a store file of its own in `directory`, with the run's batch and page
    /// sizes and `compression` on the wire or not.
    func openClient(_ name: String, compression: Bool, server: ServerProcess, directory: URL) async throws -> CairnClient {
        var configuration = CairnConfiguration(
            serverURL: server.baseURL, project: Self.project, device: name,
            credentials: .password(user: "bench", password: password),
            store: .file(directory.appendingPathComponent("\(name).sqlite").path))
        configuration.batchSize = batchSize
        configuration.pageSize = pageSize
        configuration.compression = compression
        return try await CairnClient.open(configuration)
    }

    /// Creates `records` records (`record(index)`) in `collection` over raw HTTP, in batches of `batchSize`, two
    /// batches in flight as the SDK sends them (the server reads one while it writes the other).
    static func pushRaw(
        _ http: RawHTTP, token: String, records: Int, batchSize: Int, project: String = project, collection: String = "raw_items",
        record: @escaping @Sendable (Int) -> [String: JSONValue] = record
    ) async throws {
        let starts = Array(stride(from: 0, to: records, by: batchSize))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<2 {
                group.addTask {
                    for start in starts.enumerated().filter({ $0.offset % 2 == lane }).map(\.element) {
                        let operations = (start..<min(start + batchSize, records)).map { index -> JSONValue in
                            ["opId": .string("\(collection)-\(index)"), "collection": .string(collection), "id": .string("item-\(index)"),
                             "op": "create", "data": .object(record(index))]
                        }
                        let reply = try await http.send("POST", "/v1/projects/\(project)/batch", token: token,
                                                        body: JSONValue.object(["operations": .array(operations)]).jsonData())
                        guard reply.status == 200 else { throw CLIError("push answered \(reply.status)") }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Pulls `collection` of `project` in pages of `pageSize` until the end, as plain JSON (no `Accept-Encoding`);
    /// throws unless it held `records`. Returns the bytes of the pages' bodies.
    @discardableResult
    static func pullRaw(
        _ http: RawHTTP, token: String, records: Int, pageSize: Int, project: String = project, collection: String = "raw_items"
    ) async throws -> Int64 {
        var cursor: String?
        var pulled = 0
        var bytes: Int64 = 0
        repeat {
            let path = "/v1/projects/\(project)/collections/\(collection)/changes?limit=\(pageSize)"
                + (cursor.map { "&since=\(PercentEncoding.encode($0))" } ?? "")
            let body = try await http.send("GET", path, token: token).body
            bytes += Int64(body.count)
            let page = try JSONValue(parsing: body)
            pulled += page["changes"]?.arrayValue?.count ?? 0
            cursor = page["hasMore"] == true ? page["cursor"]?.stringValue : nil
        } while cursor != nil
        guard pulled == records else { throw CLIError("pulled \(pulled) records, expected \(records)") }
        return bytes
    }

    /// Makes a new project of the bench schema in the PostgreSQL database at `url`, with the writer `bench`
    /// (made, or given `password`); returns the project's name.
    static func preparePostgres(
        url: String, prefix: String, password: String, schema: (_ project: String) -> Schema = { _ in Self.schema }
    ) async throws -> String {
        let project = prefix + "_" + UUID().uuidString.prefix(8).lowercased()
        let storage = try await ServerBackend.postgres(url: url).open().storage
        defer { Task { try? await storage.close() } }
        let admin = ServerAdmin(storage: storage)
        try await admin.addProject(project)
        try await admin.setSchema(project: project, schema(project))
        if try await storage.user(named: "bench") == nil {
            try await admin.addUser("bench", password: password)
        } else {
            try await admin.setPassword("bench", password: password)
        }
        try await admin.grant(user: "bench", project: project, role: .writer)
        return project
    }

    /// The server alone, over raw HTTP: batches of `batchSize` creates, then pages of `pageSize`.
    private func measureServer(server: ServerProcess) async throws -> [String: JSONValue] {
        let http = RawHTTP(baseURL: server.baseURL)
        let token = try await http.login("bench", password: password)
        let pushStart = ContinuousClock.now
        try await Self.pushRaw(http, token: token, records: records, batchSize: batchSize)
        let pushSeconds = seconds(since: pushStart)
        log(rate("server: pushed over raw HTTP", records, pushSeconds))

        let pullStart = ContinuousClock.now
        try await Self.pullRaw(http, token: token, records: records, pageSize: pageSize)
        let pullSeconds = seconds(since: pullStart)
        log(rate("server: pulled over raw HTTP", records, pullSeconds))
        return [
            "serverPushRecordsPerSecond": .number((Double(records) / pushSeconds).rounded()),
            "serverPullRecordsPerSecond": .number((Double(records) / pullSeconds).rounded()),
        ]
    }

    /// CPU time the client (this process) and the server use from its creation on: on a shared machine, a
    /// steadier measure of cost than throughput.
    private struct CPUMeter {
        let server: ServerProcess
        let clientStart = ProcessUsage.cpuSeconds() ?? 0
        let serverStart: Double

        init(server: ServerProcess) {
            self.server = server
            serverStart = server.cpuSeconds ?? 0
        }

        func millisecondsPer1000(_ count: Int) -> (client: Double, server: Double, text: String) {
            let scale = 1_000_000 / Double(max(count, 1))
            let client = (((ProcessUsage.cpuSeconds() ?? 0) - clientStart) * scale).rounded()
            let server = (((server.cpuSeconds ?? 0) - serverStart) * scale).rounded()
            return (client, server, String(format: " (CPU per 1,000: client %.0f ms, server %.0f ms)", client, server))
        }
    }

    private func rate(_ what: String, _ count: Int, _ seconds: Double) -> String {
        String(format: "%@: %d records in %.2f s, %.0f records/s", what, count, seconds, Double(count) / seconds)
    }

    private func seconds(since start: ContinuousClock.Instant) -> Double { BenchTiming.seconds(since: start) }
}
