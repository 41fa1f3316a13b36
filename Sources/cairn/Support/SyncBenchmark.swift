import CairnProtocol
import CairnServer
import CairnTestSupport
import Foundation

/// Pushes and pulls records over real HTTP against a `cairn serve` child process and reports the rates.
struct SyncBenchmark {
    let records: Int
    let batchSize: Int
    let pageSize: Int
    let log: (String) -> Void

    static let project = "bench"
    static let schema = Schema(collections: [
        CollectionSchema(name: "items", fields: [
            FieldSchema(name: "title", type: .string), FieldSchema(name: "body", type: .string),
            FieldSchema(name: "count", type: .integer), FieldSchema(name: "score", type: .number),
            FieldSchema(name: "done", type: .boolean), FieldSchema(name: "due", type: .datetime),
            FieldSchema(name: "tags", type: .json),
        ], conflictPolicy: .mergeFields)
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

    func run() async throws -> [String: JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let admin = ServerAdmin(storage: try SQLiteStorage(path: ServerConfiguration(dataDirectory: directory).databasePath))
            try await admin.addProject(Self.project)
            try await admin.setSchema(project: Self.project, Self.schema)
            try await admin.addUser("bench", password: TestServer.password)
            try await admin.grant(user: "bench", project: Self.project, role: .writer)
        }
        let server = try ServerProcess(dataDirectory: directory)
        defer { server.stop() }
        let http = TestHTTPClient(baseURL: server.baseURL)
        let token = try await http.login("bench").accessToken
        log("server pid \(server.process.processIdentifier) at \(server.baseURL)")

        // Push.
        let pushStart = ContinuousClock.now
        var bytesPushed = 0
        for start in stride(from: 0, to: records, by: batchSize) {
            let operations = (start..<min(start + batchSize, records)).map { index -> JSONValue in
                ["opId": .string("op-\(index)"), "collection": "items", "id": .string("item-\(index)"), "op": "create",
                 "data": .object(Self.record(index))]
            }
            let body = JSONValue.object(["operations": .array(operations)]).jsonData()
            bytesPushed += body.count
            let reply = try await http.send(.POST, "/v1/projects/\(Self.project)/batch", token: token, body: body)
            guard reply.status == 200 else { throw CLIError("push answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))") }
        }
        let pushSeconds = seconds(since: pushStart)
        log(String(format: "pushed %d records (%.0f bytes each) in %.2f s: %.0f records/s", records, Double(bytesPushed) / Double(records), pushSeconds, Double(records) / pushSeconds))

        // Pull everything back.
        let pullStart = ContinuousClock.now
        var cursor: String?
        var lastCursor = ""
        var pulled = 0
        repeat {
            let path = "/v1/projects/\(Self.project)/collections/items/changes?limit=\(pageSize)" + (cursor.map { "&since=\($0)" } ?? "")
            let reply = try await http.send(.GET, path, token: token)
            let page = try JSONValue(parsing: reply.body)
            pulled += page["changes"]?.arrayValue?.count ?? 0
            lastCursor = page["cursor"]?.stringValue ?? lastCursor
            cursor = page["hasMore"] == true ? lastCursor : nil
        } while cursor != nil
        let pullSeconds = seconds(since: pullStart)
        guard pulled == records else { throw CLIError("pulled \(pulled) records, expected \(records)") }
        log(String(format: "pulled %d records in pages of %d in %.2f s: %.0f records/s", pulled, pageSize, pullSeconds, Double(pulled) / pullSeconds))

        // Incremental pulls: change 10 records, then pull the delta; the median of 20 rounds.
        var latencies: [Double] = []
        var since = lastCursor
        for round in 0..<20 {
            let operations = (0..<10).map { index in
                SyncOperation(opId: "inc-\(round)-\(index)", collection: "items", id: "item-\(index * 7 + round)", op: .patch, data: ["count": .integer(Int64(round))])
            }
            _ = try await http.send(.POST, "/v1/projects/\(Self.project)/batch", token: token, value: BatchRequest(operations: operations))
            let start = ContinuousClock.now
            let reply = try await http.send(.GET, "/v1/projects/\(Self.project)/collections/items/changes?since=\(since)", token: token)
            let page = try JSONValue(parsing: reply.body)
            latencies.append(seconds(since: start) * 1000)
            since = page["cursor"]?.stringValue ?? since
        }
        let incremental = latencies.sorted()[latencies.count / 2]
        log(String(format: "incremental pull of 10 changes: median %.2f ms", incremental))

        let serverPeak = server.peakRSS ?? 0
        let clientPeak = ProcessMemory.peakRSS() ?? 0
        log("server peak RSS \(serverPeak / 1_048_576) MB, client peak RSS \(clientPeak / 1_048_576) MB")
        return [
            "records": .integer(Int64(records)),
            "pushOpsPerSecond": .number((Double(records) / pushSeconds).rounded()),
            "pullRecordsPerSecond": .number((Double(records) / pullSeconds).rounded()),
            "incrementalPullMilliseconds": .number((incremental * 100).rounded() / 100),
            "clientPeakRSSBytes": .integer(Int64(clientPeak)),
            "serverPeakRSSBytes": .integer(Int64(serverPeak)),
        ]
    }

    private func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
