import Cairn
import CairnProtocol
import CairnServer
import Foundation

/// Measures what data rules cost a pull: the SDK's initial pull of the same records from a collection without
/// rules, from one whose read rule matches every record for the user, and from it for a user whose rule matches
/// 1%, against a `cairn serve` child process on loopback. The three pulls alternate, round after round, each into a
/// fresh store; the figures are medians.
struct RulesBenchmark {
    let records: Int
    let pageSize: Int
    let rounds: Int
    let log: (String) -> Void
    let password = UUID().uuidString

    static let project = SyncBenchmark.project
    static let regions = ["north", "south", "east", "west"]
    /// The bench's fields plus who a job is assigned to and its region.
    static let fields = SyncBenchmark.fields + [FieldSchema(name: "assignee", type: .string), FieldSchema(name: "region", type: .string)]
    static let readRule: Filter = .or([
        .condition("assignee", .eq, RuleParameter.userName.value), .condition("region", .in, RuleParameter.claim("regions").value),
    ])
    static let schema = Schema(collections: [
        CollectionSchema(name: "open_jobs", fields: fields, conflictPolicy: .mergeFields),
        CollectionSchema(name: "jobs", fields: fields, conflictPolicy: .mergeFields, rules: DataRules(read: readRule)),
    ])

    /// A bench record assigned to `few` one time in a hundred, else to one of 50 others, in one of four regions.
    static func record(_ index: Int) -> [String: JSONValue] {
        var data = SyncBenchmark.record(index)
        data["assignee"] = .string(index % 100 == 0 ? "few" : "tech-\(index % 50)")
        data["region"] = .string(regions[index % regions.count])
        return data
    }

    func run() async throws -> [String: JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-bench-rules-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let admin = ServerAdmin(storage: try ServerBackend.sqlite(dataDirectory: directory).openNow().storage)
        try await admin.addProject(Self.project)
        try await admin.setSchema(project: Self.project, Self.schema)
        for (user, role) in [("loader", Role.admin), ("everyone", .reader), ("few", .reader)] {
            try await admin.addUser(user, password: password)
            try await admin.grant(user: user, project: Self.project, role: role)
        }
        // `everyone` may read every region: the rule matches all records, but the database still evaluates it.
        try await admin.setClaims(user: "everyone", project: Self.project, ["regions": .array(Self.regions.map { .string($0) })])
        let server = try ServerProcess(dataDirectory: directory)
        defer { server.stop() }
        log("server pid \(server.process.processIdentifier) at \(server.baseURL)")

        let http = RawHTTP(baseURL: server.baseURL)
        let token = try await http.login("loader", password: password)
        for collection in ["open_jobs", "jobs"] {
            try await SyncBenchmark.pushRaw(
                http, token: token, records: records, batchSize: 1000, project: Self.project, collection: collection, record: Self.record)
        }
        log("loaded \(records) records into open_jobs (no rules) and jobs (a read rule)")

        let cases = [("no rules", "everyone", "open_jobs", records), ("rule matching all", "everyone", "jobs", records),
                     ("rule matching 1%", "few", "jobs", (records + 99) / 100)]
        var samples = Array(repeating: [Double](), count: cases.count)
        for round in 0..<rounds {
            // Alternate the order, so no case always runs on a warmer machine.
            let order = round % 2 == 0 ? Array(cases.indices) : cases.indices.reversed()
            for index in order {
                let (_, user, collection, expected) = cases[index]
                let store = directory.appendingPathComponent("\(user)-\(collection)-\(round).sqlite").path
                var configuration = CairnConfiguration(
                    serverURL: server.baseURL, project: Self.project, device: "bench-\(user)",
                    credentials: .password(user: user, password: password), store: .file(store))
                configuration.pageSize = pageSize
                let client = try await CairnClient.open(configuration)
                // Signing in (bcrypt on the server) and the schema are not the pull's work: done before the clock starts.
                try await client.refreshSchema()
                let start = ContinuousClock.now
                let pulled = try await client.pull([collection]).pulled
                samples[index].append(BenchTiming.seconds(since: start))
                try await client.close()
                guard pulled == expected else { throw CLIError("\(user) pulled \(pulled) records of \(collection), expected \(expected)") }
            }
        }
        let medians = samples.map { $0.sorted()[$0.count / 2] }
        for (index, (name, _, _, count)) in cases.enumerated() {
            log(String(format: "%@: %d records in %.3f s (median of %d)", name, count, medians[index], rounds))
        }
        let allToNone = medians[1] / medians[0], fewToNone = medians[2] / medians[0]
        log(String(format: "a rule matching all: %.2f× the pull without rules; a rule matching 1%%: %.3f× it", allToNone, fewToNone))
        return [
            "records": .integer(Int64(records)), "rounds": .integer(Int64(rounds)),
            "pullNoRulesSeconds": .number(BenchTiming.rounded(medians[0])),
            "pullRuleMatchingAllSeconds": .number(BenchTiming.rounded(medians[1])),
            "pullRuleMatchingOnePercentSeconds": .number(BenchTiming.rounded(medians[2])),
            "ruleMatchingAllToNoRules": .number(BenchTiming.rounded(allToNone)),
            "ruleMatchingOnePercentToNoRules": .number(BenchTiming.rounded(fewToNone)),
        ]
    }
}
