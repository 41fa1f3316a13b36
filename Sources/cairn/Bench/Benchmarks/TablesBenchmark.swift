import CairnProtocol
import CairnServer
import Foundation
import GRDB
import Logging
import PostgresNIO

/// Collections in PostgreSQL tables against ordinary ones, in the same run on the same database: each round makes a
/// project with `items` (kept by Cairn) and `table_items` (a table of its own, same fields), pushes the same records
/// into both in raw batches and pulls them back in pages, the order alternating between rounds. Then a device runs
/// `cairn sync --watch` (a child process) and each sample changes one record, alternately with a SQL `UPDATE` on the
/// table and with a batch pushed over HTTP to the ordinary collection (the yardstick), timing until the watching
/// device's store holds it. Medians.
struct TablesBenchmark {
    let postgresURL: String
    let records: Int
    let batchSize: Int
    let pageSize: Int
    let rounds: Int
    let samples: Int
    let log: (String) -> Void
    let password = UUID().uuidString

    func run() async throws -> [String: JSONValue] {
        var rates: [String: [Double]] = [:]
        var latest: (server: ServerProcess, project: String, table: String)?
        for round in 0..<rounds {
            let (server, project, table) = try await start()
            let http = RawHTTP(baseURL: server.baseURL)
            let token = try await http.login("bench", password: password)
            for collection in round % 2 == 0 ? ["items", "table_items"] : ["table_items", "items"] {
                let pushStart = ContinuousClock.now
                try await SyncBenchmark.pushRaw(http, token: token, records: records, batchSize: batchSize, project: project, collection: collection)
                let push = Double(records) / BenchTiming.seconds(since: pushStart)
                let pullStart = ContinuousClock.now
                _ = try await SyncBenchmark.pullRaw(http, token: token, records: records, pageSize: pageSize, project: project, collection: collection)
                let pull = Double(records) / BenchTiming.seconds(since: pullStart)
                let kind = collection == "items" ? "ordinary" : "table"
                rates["\(kind)Push", default: []].append(push)
                rates["\(kind)Pull", default: []].append(pull)
                log(String(format: "round %d, %@ collection: push %.0f records/s, pull %.0f records/s", round + 1, kind, push, pull))
            }
            if let latest { latest.server.stop() }
            latest = (server, project, table)
        }
        guard let (server, project, table) = latest else { return [:] }
        defer { server.stop() }
        var figures: [String: JSONValue] = ["records": .integer(Int64(records)), "rounds": .integer(Int64(rounds))]
        for (name, values) in rates { figures[name + "RecordsPerSecond"] = .number(values.sorted()[values.count / 2].rounded()) }
        for kind in ["Push", "Pull"] {
            let ratio = (figures["table\(kind)RecordsPerSecond"]?.numberValue ?? 0) / (figures["ordinary\(kind)RecordsPerSecond"]?.numberValue ?? 1)
            figures["tableToOrdinary\(kind)"] = .number(BenchTiming.rounded(ratio))
        }
        let (sql, http) = try await latencies(server: server, project: project, table: table)
        figures["sqlUpdateToDeviceMedianMilliseconds"] = .number(BenchTiming.rounded(sql))
        figures["httpPushToDeviceMedianMilliseconds"] = .number(BenchTiming.rounded(http))
        log(String(format: "medians: push ordinary %.0f, table %.0f records/s (%.2f×); pull ordinary %.0f, table %.0f records/s (%.2f×)",
                   figures["ordinaryPushRecordsPerSecond"]?.numberValue ?? 0, figures["tablePushRecordsPerSecond"]?.numberValue ?? 0,
                   figures["tableToOrdinaryPush"]?.numberValue ?? 0, figures["ordinaryPullRecordsPerSecond"]?.numberValue ?? 0,
                   figures["tablePullRecordsPerSecond"]?.numberValue ?? 0, figures["tableToOrdinaryPull"]?.numberValue ?? 0))
        log(String(format: "to a device running cairn sync --watch: SQL UPDATE median %.1f ms, HTTP push (yardstick) median %.1f ms", sql, http))
        return figures
    }

    /// A new project with both collections, and `cairn serve --postgres` on it.
    private func start() async throws -> (ServerProcess, String, String) {
        let project = try await SyncBenchmark.preparePostgres(url: postgresURL, prefix: "tables", password: password) { project in
            Schema(collections: [
                CollectionSchema(name: "items", fields: SyncBenchmark.fields, conflictPolicy: .mergeFields),
                CollectionSchema(name: "table_items", fields: SyncBenchmark.fields, conflictPolicy: .mergeFields, table: Self.table(of: project)),
            ])
        }
        return (try ServerProcess(storage: ["--postgres", postgresURL]), project, Self.table(of: project))
    }

    /// The table of `project`'s table collection.
    static func table(of project: String) -> String { "bench_tables.\(project)" }

    /// Median milliseconds from a change to its arrival in the store of a `cairn sync --watch` child: by SQL on the
    /// table, and by an HTTP batch on the ordinary collection, alternately.
    private func latencies(server: ServerProcess, project: String, table: String) async throws -> (sql: Double, http: Double) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-tables-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("device.sqlite").path
        let first = try Self.tool(["sync", "--store", store, "--server", server.baseURL.absoluteString, "--project", project, "--user", "bench"], password: password)
        first.waitUntilExit()
        guard first.terminationStatus == 0 else { throw CLIError("the device's first cairn sync failed") }
        let watch = try Self.tool(["sync", "--store", store, "--watch"], password: password)
        defer { watch.terminate(); watch.waitUntilExit() }
        let device = try DatabaseQueue(path: store, configuration: { var c = Configuration(); c.readonly = true; return c }())
        let http = RawHTTP(baseURL: server.baseURL)
        let token = try await http.login("bench", password: password)
        let sql = try await SQLSession.open(postgresURL)
        defer { Task { try? await sql.connection.close() } }
        // The watcher is connected once a first change reaches it.
        _ = try await wait(device, collection: "table_items", id: "item-0", count: -1) {
            try await sql.run("UPDATE \(table) SET count = -1 WHERE id = 'item-0'")
        }
        var bySQL: [Double] = [], byHTTP: [Double] = []
        for sample in 0..<samples {
            let value = Int64(1_000_000 + sample)
            byHTTP.append(try await wait(device, collection: "items", id: "item-\(sample % records)", count: value) {
                let operation: JSONValue = [
                    "opId": .string(UUID().uuidString), "collection": "items", "id": .string("item-\(sample % records)"), "op": "patch",
                    "data": ["count": .integer(value)],
                ]
                let body = try CairnJSON.encode(JSONValue.object(["operations": [operation]]))
                let answer = try await http.send("POST", "/v1/projects/\(project)/batch", token: token, body: body)
                guard answer.status == 200 else { throw CLIError("the yardstick's batch answered HTTP \(answer.status)") }
            })
            bySQL.append(try await wait(device, collection: "table_items", id: "item-\(sample % records)", count: value) {
                try await sql.run("UPDATE \(table) SET count = \(value) WHERE id = 'item-\(sample % records)'")
            })
        }
        return (bySQL.sorted()[bySQL.count / 2], byHTTP.sorted()[byHTTP.count / 2])
    }

    /// Runs `change`, then reads the device's store until record `id` of `collection` has `count`; milliseconds.
    private func wait(
        _ device: DatabaseQueue, collection: String, id: String, count: Int64, change: () async throws -> Void
    ) async throws -> Double {
        let start = ContinuousClock.now
        try await change()
        while try await device.read({ try Int64.fetchOne($0, sql: "SELECT count FROM \(collection) WHERE id = ?", arguments: [id]) }) != count {
            guard ContinuousClock.now - start < .seconds(30) else { throw CLIError("\(collection)/\(id) did not reach the device within 30 s") }
            try await Task.sleep(for: .milliseconds(1))
        }
        return BenchTiming.seconds(since: start) * 1000
    }

    /// This same executable with `arguments`, the password in `CAIRN_PASSWORD`, its output dropped.
    static func tool(_ arguments: [String], password: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["CAIRN_PASSWORD": password]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }
}

/// One SQL session on the database, as other software opens one.
struct SQLSession {
    let connection: PostgresConnection
    static let logger = Logger(label: "cairn.bench.sql")

    static func open(_ url: String) async throws -> SQLSession {
        guard let components = URLComponents(string: url) else { throw CLIError("cannot read the database URL") }
        let configuration = PostgresConnection.Configuration(
            host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password, database: String(components.path.dropFirst()), tls: .disable)
        return SQLSession(connection: try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger))
    }

    func run(_ sql: String) async throws { _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Self.logger) }
}
