import Cairn
import CairnProtocol
import Foundation

/// Measures the SDK's transports side by side in one run, against one `cairn serve` child process on loopback: a
/// push of `records` records, an initial pull of as many into a fresh store, and the upload and download of a
/// `fileMegabytes` file. The transports alternate in order round by round; the figures are medians.
struct TransportBenchmark {
    let transports: [BenchTransport]
    let records: Int
    let fileMegabytes: Int
    let rounds: Int
    let log: (String) -> Void
    let password = UUID().uuidString

    /// The measures, in the table's order.
    static let measures = ["push", "pull", "upload", "download"]

    func run() async throws -> [String: JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-transport-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await SyncBenchmark.startServer(in: directory.appendingPathComponent("server"), users: ["bench"], password: password)
        defer { server.stop() }
        let http = RawHTTP(baseURL: server.baseURL)
        try await SyncBenchmark.pushRaw(http, token: try await http.login("bench", password: password), records: records, batchSize: 1000)
        let source = try Self.makeFile(directory.appendingPathComponent("large.bin"), megabytes: fileMegabytes)
        log("server holds \(records) records; a \(fileMegabytes) MB file to move")

        var seconds: [BenchTransport: [String: [Double]]] = [:]
        var fileID: String?
        for round in 0..<rounds {
            let order = round.isMultiple(of: 2) ? transports : transports.reversed()
            for transport in order {
                let base = directory.appendingPathComponent("\(transport.rawValue)-\(round)")
                var measured = try await measureRecords(transport, server: server, base: base, round: round)
                let (upload, id) = try await measureUpload(transport, server: server, base: base, source: source)
                measured["upload"] = upload
                fileID = fileID ?? id
                measured["download"] = try await measureDownload(transport, server: server, base: base, id: fileID ?? id)
                for (measure, value) in measured { seconds[transport, default: [:]][measure, default: []].append(value) }
                log("round \(round + 1) \(transport.title): " + Self.measures.map { String(format: "%@ %.2f s", $0, measured[$0] ?? 0) }.joined(separator: ", "))
            }
        }
        return report(seconds)
    }

    /// The table of medians, and the same figures for the JSON line.
    private func report(_ seconds: [BenchTransport: [String: [Double]]]) -> [String: JSONValue] {
        func median(_ transport: BenchTransport, _ measure: String) -> Double {
            let samples = (seconds[transport]?[measure] ?? [0]).sorted()
            return samples[samples.count / 2]
        }
        func rate(_ measure: String, _ value: Double) -> String {
            measure == "push" || measure == "pull"
                ? String(format: "%.2f s (%.0f rec/s)", value, Double(records) / value)
                : String(format: "%.2f s (%.0f MB/s)", value, Double(fileMegabytes) / value)
        }
        let titles = ["push": "push \(records) records", "pull": "initial pull \(records) records",
                      "upload": "upload \(fileMegabytes) MB file", "download": "download \(fileMegabytes) MB file"]
        var header = ["MEDIAN OF \(rounds)"] + transports.map(\.title)
        if transports.count == 2 { header.append("\(transports[1].title) / \(transports[0].title)") }
        var rows: [[String]] = []
        var figures: [String: JSONValue] = ["records": .integer(Int64(records)), "fileMegabytes": .integer(Int64(fileMegabytes))]
        for measure in Self.measures {
            var row = [titles[measure] ?? measure]
            for transport in transports {
                let value = median(transport, measure)
                row.append(rate(measure, value))
                figures["\(measure)Seconds_\(transport.rawValue)"] = .number(BenchTiming.rounded(value))
            }
            if transports.count == 2 { row.append(String(format: "%.2f×", median(transports[1], measure) / median(transports[0], measure))) }
            rows.append(row)
        }
        log(TextTable(header, rows).text)
        return figures
    }

    private func client(_ transport: BenchTransport, server: ServerProcess, store: URL) async throws -> CairnClient {
        var configuration = CairnConfiguration(
            serverURL: server.baseURL, project: SyncBenchmark.project, device: "bench", credentials: .password(user: "bench", password: password),
            store: .file(store.path))
        configuration.fileCacheBytes = Int64(fileMegabytes + 1) << 20
        return try await CairnClient.open(configuration, transport: transport.make())
    }

    /// Pushes `records` new records written locally beforehand, then pulls the server's preloaded ones into a fresh store.
    private func measureRecords(_ transport: BenchTransport, server: ServerProcess, base: URL, round: Int) async throws -> [String: Double] {
        let writer = try await client(transport, server: server, store: base.appendingPathExtension("writer.sqlite"))
        for start in stride(from: 0, to: records, by: 5000) {
            try writer.writeBatch { batch in
                for index in start..<min(start + 5000, records) {
                    try batch.save("items", id: "\(transport.rawValue)-\(round)-\(index)", data: SyncBenchmark.record(index))
                }
            }
        }
        var start = ContinuousClock.now
        let pushed = try await writer.push().pushed
        let push = BenchTiming.seconds(since: start)
        guard pushed == records else { throw CLIError("pushed \(pushed) of \(records)") }
        try await writer.close()

        let reader = try await client(transport, server: server, store: base.appendingPathExtension("reader.sqlite"))
        start = ContinuousClock.now
        let pulled = try await reader.pull(["raw_items"]).pulled
        let pull = BenchTiming.seconds(since: start)
        guard pulled == records else { throw CLIError("pulled \(pulled) of \(records)") }
        try await reader.close()
        return ["push": push, "pull": pull]
    }

    /// Uploads the file from a fresh store (the time includes keeping its copy in the store's folder); returns the
    /// seconds and the server's file id.
    private func measureUpload(_ transport: BenchTransport, server: ServerProcess, base: URL, source: URL) async throws -> (Double, String) {
        let uploader = try await client(transport, server: server, store: base.appendingPathExtension("upload.sqlite"))
        let start = ContinuousClock.now
        let localID = try uploader.files.upload(from: source, name: "large.bin")
        await uploader.files.waitForUploads()
        let seconds = BenchTiming.seconds(since: start)
        guard let id = try uploader.files.upload(localID)?.serverID else { throw CLIError("the \(fileMegabytes) MB file did not upload") }
        try await uploader.signOut()
        return (seconds, id)
    }

    /// Downloads the file into a fresh store's cache.
    private func measureDownload(_ transport: BenchTransport, server: ServerProcess, base: URL, id: String) async throws -> Double {
        let client = try await client(transport, server: server, store: base.appendingPathExtension("download.sqlite"))
        let start = ContinuousClock.now
        try await client.files.download(id)
        let seconds = BenchTiming.seconds(since: start)
        try await client.signOut()
        return seconds
    }

    /// A file of `megabytes` MB of random bytes.
    static func makeFile(_ url: URL, megabytes: Int) throws -> URL {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let writer = try FileHandle(forWritingTo: url)
        defer { try? writer.close() }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<megabytes {
            for index in stride(from: 0, to: chunk.count, by: 8) { withUnsafeBytes(of: generator.next()) { chunk.replaceSubrange(index..<index + 8, with: $0) } }
            try writer.write(contentsOf: chunk)
        }
        return url
    }
}
