import Cairn
import CairnLinkShaping
import CairnProtocol
import CairnServer
import Foundation

/// `cairn bench chaos`: stores write shared and private records through a proxy that breaks connections, while
/// their `cairn` processes and the server are killed with SIGKILL; then the network heals and the run checks that
/// every acknowledged write is on the server exactly once and that every store holds what the server holds.
struct ChaosRun {
    let settings: ChaosSettings
    let log: @Sendable (String) -> Void
    let password = UUID().uuidString

    static let schema = Schema(collections: [
        CollectionSchema(name: "logs", fields: [FieldSchema(name: "message", type: .string)], conflictPolicy: .mergeFields),
        CollectionSchema(
            name: "notes", fields: [FieldSchema(name: "title", type: .string), FieldSchema(name: "count", type: .integer)],
            conflictPolicy: .mergeFields),
    ])

    func run() async throws -> [String: JSONValue] {
        let started = ContinuousClock.now
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-bench-chaos-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let runID = UUID().uuidString.prefix(8).lowercased()
        let project = "chaos_\(runID)"
        let users = (0..<settings.stores).map { "chaos-\(runID)-\($0)" }
        let backend = try backend(in: directory)
        try await prepare(backend, project: project, users: users)

        let server = try ChaosServer(storage: serverArguments(directory))
        let proxy = try await FaultProxy.start(upstreamPort: server.port, faultRate: settings.faultRate, seed: settings.seed)
        let tally = ChaosTally()
        let environment = ["CAIRN_PASSWORD": password, "CAIRN_REQUEST_TIMEOUT": "10"]
        let writers = users.enumerated().map { index, user in
            ChaosWriter(
                index: index, store: directory.appendingPathComponent("store-\(index).sqlite"), user: user, serverURL: proxy.baseURL,
                project: project, tally: tally, settings: settings, environment: environment)
        }
        log("chaos on \(settings.backend.rawValue): \(settings.stores) stores through a proxy breaking \(Int(settings.faultRate * 100))% of connections, until \(settings.faults) faults and \(settings.kills) kills")
        do {
            for writer in writers { try await writer.firstSync() }
            let settings = self.settings
            let done: @Sendable () -> Bool = {
                let counts = tally.snapshot
                return proxy.injected.count >= settings.faults && counts.clientKills >= settings.clientKills
                    && counts.serverKills >= settings.serverKills
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in writers {
                    group.addTask { try await writer.run(seed: settings.seed &+ UInt64(writer.index) &* 7919, done: done) }
                }
                group.addTask {
                    var random = SplitMix(seed: settings.seed ^ 0x5EED)
                    while !done() {
                        try await Task.sleep(for: .milliseconds(1500 + random.next(below: 2500)))
                        guard tally.snapshot.serverKills < settings.serverKills else { continue }
                        try await server.killAndRestart()
                        tally.update { $0.serverKills += 1 }
                    }
                }
                group.addTask {
                    while !done() {
                        try await Task.sleep(for: .seconds(10))
                        let counts = tally.snapshot
                        log("  \(proxy.injected.count) faults, \(counts.clientKills + counts.serverKills) kills, \(counts.acknowledged.count) records acknowledged, \(counts.syncsSucceeded)/\(counts.syncs) syncs through")
                    }
                }
                try await group.waitForAll()
            }
        } catch {
            await server.stop()
            await proxy.stop()
            throw error
        }

        // The network heals; every store uploads what it holds, then every store pulls what the others wrote.
        proxy.faultRate = 0
        try await server.ensureRunning()
        let counts = tally.snapshot
        let checks = ChaosChecks(stores: writers.map(\.store), acknowledged: counts.acknowledged, unsure: counts.unsure, password: password)
        var failures = await checks.storesConverge(log: log)
        await server.stop()
        await proxy.stop()
        let audit = try await audit(backend, project: project)
        if audit.head != Int64(audit.applied) {
            failures.append("the server's head version is \(audit.head) for \(audit.applied) applied operations: one was applied twice")
        }
        let seconds = BenchTiming.seconds(since: started)
        let kept = checks.keptUnsure
        log(String(format: "%d faults over %d connections, %d kills (%d clients, %d servers) in %.0f s", proxy.injected.count, proxy.connections,
                   counts.clientKills + counts.serverKills, counts.clientKills, counts.serverKills, seconds))
        log("\(counts.acknowledged.count) private records acknowledged, all on the server once: \(failures.isEmpty ? "yes" : "NO"); \(counts.unsure.count) in killed puts (\(kept) kept); \(counts.sharedWrites) shared writes; \(counts.syncsSucceeded) of \(counts.syncs) syncs got through")
        log("server: head version \(audit.head), \(audit.applied) operations applied")
        for failure in failures { log("FAILED: \(failure)") }
        return [
            "backend": .string(settings.backend.rawValue), "stores": .integer(Int64(settings.stores)), "seed": .integer(Int64(bitPattern: settings.seed)),
            "faults": .integer(Int64(proxy.injected.count)), "connections": .integer(Int64(proxy.connections)),
            "kills": .integer(Int64(counts.clientKills + counts.serverKills)), "clientKills": .integer(Int64(counts.clientKills)),
            "serverKills": .integer(Int64(counts.serverKills)), "acknowledged": .integer(Int64(counts.acknowledged.count)),
            "unsure": .integer(Int64(counts.unsure.count)), "unsureKept": .integer(Int64(kept)),
            "sharedWrites": .integer(Int64(counts.sharedWrites)), "syncs": .integer(Int64(counts.syncs)),
            "syncsSucceeded": .integer(Int64(counts.syncsSucceeded)), "headVersion": .integer(audit.head),
            "appliedOperations": .integer(Int64(audit.applied)), "seconds": .number(BenchTiming.rounded(seconds)),
            "passed": .bool(failures.isEmpty), "failures": .array(failures.map(JSONValue.string)),
        ]
    }

    private func backend(in directory: URL) throws -> ServerBackend {
        switch settings.backend {
        case .sqlite: return .sqlite(dataDirectory: directory.appendingPathComponent("server"))
        case .postgres:
            guard let url = settings.postgresURL else { throw CLIError("--backend postgres needs --postgres URL (or CAIRN_POSTGRES_URL)") }
            return .postgres(url: url)
        }
    }

    private func serverArguments(_ directory: URL) -> [String] {
        switch settings.backend {
        case .sqlite: return ["--data", directory.appendingPathComponent("server").path]
        case .postgres: return ["--postgres", settings.postgresURL ?? ""]
        }
    }

    /// The project, its schema and one writer per store.
    private func prepare(_ backend: ServerBackend, project: String, users: [String]) async throws {
        if case .sqlite(let directory, _) = backend {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let storage = try await backend.open().storage
        let admin = ServerAdmin(storage: storage)
        try await admin.addProject(project)
        try await admin.setSchema(project: project, Self.schema)
        for user in users {
            try await admin.addUser(user, password: password)
            try await admin.grant(user: user, project: project, role: .writer)
        }
        try await storage.close()
    }

    /// The head version and the operations applied, read from the stopped server's storage.
    private func audit(_ backend: ServerBackend, project: String) async throws -> (head: Int64, applied: Int) {
        let storage = try await backend.open().storage
        let counts = try await storage.operationCounts(project: project)
        try await storage.close()
        return counts
    }
}
