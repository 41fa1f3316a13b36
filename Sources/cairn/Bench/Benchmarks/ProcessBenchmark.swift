import CairnProtocol
import Foundation

/// A whole `cairn sync` first sync as a user runs it, a process of its own into a fresh store, beside SQLite's floor
/// inserting the same rows in the same round: its wall time, the floor's, their ratio, and where the process's time
/// went (`cairn sync --timings`: opening, signing in, the schema, the pages, after the last page; start-up and exit
/// are the wall time the process did not see).
struct ProcessBenchmark {
    let records: Int
    let rounds: Int
    let log: (String) -> Void
    let password = UUID().uuidString

    /// The parts of the breakdown reported, as `cairn sync --timings` names them.
    static let parts = ["openMs", "signInMs", "schemaMs", "syncMs", "toFirstPageMs", "pagesMs", "afterLastPageMs", "finishMs"]

    func run() async throws -> [String: JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-bench-process-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await SyncBenchmark.startServer(in: directory, users: ["bench"], password: password)
        defer { server.stop() }
        let http = RawHTTP(baseURL: server.baseURL)
        let token = try await http.login("bench", password: password)
        // The rows of the floor (`RawInsertBenchmark`): the sync bench's records in its `items` collection.
        try await SyncBenchmark.pushRaw(http, token: token, records: records, batchSize: 1000, collection: "items")
        let floor = RawInsertBenchmark(records: records, directory: directory)

        var seconds: [Double] = []
        var floorSeconds: [Double] = []
        var parts: [String: [Double]] = [:]
        for round in 0..<rounds {
            // Alternating which goes first, so neither always meets a warmer machine.
            for side in round % 2 == 0 ? ["floor", "process"] : ["process", "floor"] {
                if side == "floor" {
                    floorSeconds.append(Double(records) / (try floor.floor(round: round)))
                    continue
                }
                let (wall, timings) = try await sync(server: server, store: directory.appendingPathComponent("process-\(round).sqlite"))
                seconds.append(wall)
                for part in Self.parts { parts[part, default: []].append(timings[part]?.numberValue ?? 0) }
                parts["startUpAndExitMs", default: []].append(wall * 1000 - (timings["totalMs"]?.numberValue ?? 0))
                log(String(format: "round %d: cairn sync %.2f s (%@)", round + 1, wall, JSONValue.object(timings).jsonText()))
            }
            log(String(format: "round %d: the floor inserts the rows in %.2f s", round + 1, floorSeconds.last ?? 0))
        }
        let median = Self.median(seconds)
        let floorMedian = Self.median(floorSeconds)
        var breakdown: [String: JSONValue] = [:]
        for (part, values) in parts { breakdown[part] = .number(BenchTiming.rounded(Self.median(values))) }
        log(String(format: "medians of %d: cairn sync %.2f s, the floor %.2f s: %.2fx the floor's rate", rounds, median, floorMedian, floorMedian / median))
        log("where the process's time went (ms, medians): \(JSONValue.object(breakdown).jsonText())")
        return [
            "records": .integer(Int64(records)), "rounds": .integer(Int64(rounds)),
            "seconds": .number(BenchTiming.rounded(median)), "floorSeconds": .number(BenchTiming.rounded(floorMedian)),
            "toSQLiteFloor": .number(BenchTiming.rounded(floorMedian / median)), "breakdown": .object(breakdown),
        ]
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// Runs `cairn sync --timings` (this same executable) into a fresh store; its wall time and its breakdown.
    private func sync(server: ServerProcess, store: URL) async throws -> (seconds: Double, timings: [String: JSONValue]) {
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) } }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments = [
            "sync", "--store", store.path, "--server", server.baseURL.absoluteString, "--project", SyncBenchmark.project, "--user", "bench",
            "--timings",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["CAIRN_PASSWORD"] = password
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        let start = ContinuousClock.now
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let seconds = BenchTiming.seconds(since: start)
        guard process.terminationStatus == 0 else { throw CLIError("cairn sync exited \(process.terminationStatus): \(text)") }
        guard text.contains("pulled \(records),") else { throw CLIError("cairn sync did not pull \(records) records: \(text)") }
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("timings: ") }),
            let timings = try JSONValue(parsing: Data(line.dropFirst("timings: ".count).utf8)).objectValue
        else { throw CLIError("cairn sync printed no timings: \(text)") }
        return (seconds, timings)
    }
}
