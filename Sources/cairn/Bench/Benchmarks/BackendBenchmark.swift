import CairnProtocol
import CairnServer
import Foundation

/// The server's raw push and pull on SQLite and on PostgreSQL in the same run: each round starts a `cairn serve`
/// child on a fresh SQLite data directory and one on the PostgreSQL database (a fresh project there), in alternating
/// order, and times the same batches and pages against each. Medians of the rounds.
struct BackendBenchmark {
    let postgresURL: String
    let records: Int
    let batchSize: Int
    let pageSize: Int
    let rounds: Int
    let log: (String) -> Void
    let password = UUID().uuidString

    func run() async throws -> [String: JSONValue] {
        var samples: [String: [Double]] = [:]
        for round in 0..<rounds {
            for backend in round % 2 == 0 ? ["sqlite", "postgres"] : ["postgres", "sqlite"] {
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-bench-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: directory) }
                let (server, project) = try await BenchServer.start(
                    postgresURL: backend == "postgres" ? postgresURL : nil, directory: directory, prefix: "bench", password: password)
                defer { server.stop() }
                let (push, pull) = try await measure(server, project: project)
                samples["\(backend)Push", default: []].append(push)
                samples["\(backend)Pull", default: []].append(pull)
                log(String(format: "round %d, %@: push %.0f records/s, pull %.0f records/s", round + 1, backend, push, pull))
            }
        }
        var figures: [String: JSONValue] = ["records": .integer(Int64(records)), "rounds": .integer(Int64(rounds))]
        for (name, values) in samples { figures[name + "RecordsPerSecond"] = .number(values.sorted()[values.count / 2].rounded()) }
        for kind in ["Push", "Pull"] {
            let ratio = (figures["postgres\(kind)RecordsPerSecond"]?.numberValue ?? 0) / (figures["sqlite\(kind)RecordsPerSecond"]?.numberValue ?? 1)
            figures["postgresToSqlite\(kind)"] = .number(BenchTiming.rounded(ratio))
        }
        log(String(format: "medians: push SQLite %.0f, PostgreSQL %.0f records/s; pull SQLite %.0f, PostgreSQL %.0f records/s",
                   figures["sqlitePushRecordsPerSecond"]?.numberValue ?? 0, figures["postgresPushRecordsPerSecond"]?.numberValue ?? 0,
                   figures["sqlitePullRecordsPerSecond"]?.numberValue ?? 0, figures["postgresPullRecordsPerSecond"]?.numberValue ?? 0))
        return figures
    }

    /// Raw batches of creates, then every page: records per second of each.
    private func measure(_ server: ServerProcess, project: String) async throws -> (push: Double, pull: Double) {
        let http = RawHTTP(baseURL: server.baseURL)
        let token = try await http.login("bench", password: password)
        let pushStart = ContinuousClock.now
        try await SyncBenchmark.pushRaw(http, token: token, records: records, batchSize: batchSize, project: project)
        let push = Double(records) / BenchTiming.seconds(since: pushStart)
        let pullStart = ContinuousClock.now
        try await SyncBenchmark.pullRaw(http, token: token, records: records, pageSize: pageSize, project: project)
        return (push, Double(records) / BenchTiming.seconds(since: pullStart))
    }
}
