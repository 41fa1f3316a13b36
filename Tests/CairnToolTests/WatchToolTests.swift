import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("cairn sync --watch and cairn status", .timeLimit(.minutes(20)))
struct WatchToolTests {
    /// A `cairn sync --watch` process, read line by line.
    final class Watcher: @unchecked Sendable {
        let process: ChildProcess
        private let lock = NSLock()
        private var text = ""

        init(store: String, password: String) throws {
            var environment = ProcessInfo.processInfo.environment
            environment["CAIRN_PASSWORD"] = password
            process = try Tool.start(["sync", "--watch", "--store", store], environment: environment,
                                     output: .pipe, errors: .standardOutput)
            process.standardOutput?.readabilityHandler = { [weak self] handle in
                let chunk = handle.availableData
                guard let self, !chunk.isEmpty else { return }
                self.lock.lock()
                self.text += String(decoding: chunk, as: UTF8.self)
                self.lock.unlock()
            }
        }

        var printed: String {
            lock.lock()
            defer { lock.unlock() }
            return text
        }

        /// Ctrl-C, then the exit status, however long the watcher takes to stop (the suite's time limit is the
        /// safety net).
        func interrupt() async -> Int32 {
            process.send(SIGINT)
            await process.exit()
            return process.terminationStatus
        }
    }

    static func titles(_ store: String) async throws -> [String: String] {
        let output = try await Tool.run(["query", "--store", store, "SELECT id, title FROM notes"])
        guard case .array(let rows)? = try JSONValue(parsing: output.stdout)["result"]?["database"]?["records"] else { return [:] }
        var titles: [String: String] = [:]
        for row in rows { if let id = row["id"]?.stringValue { titles[id] = row["title"]?.stringValue ?? "" } }
        return titles
    }

    /// Waits until `condition` holds, with no wall-clock give-up (the suite's time limit is the safety net).
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        while try await !condition() { try await Task.sleep(for: .milliseconds(100)) }
        return true
    }

    @Test("two watching stores converge through cairn put alone, also across a server restart; Ctrl-C stops them cleanly; status says up to date")
    func watchConverges() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let environment = ["CAIRN_PASSWORD": TestServer.password]
            let (a, b) = (Fixture.temporaryStorePath(), Fixture.temporaryStorePath())
            for (store, user) in [(a, "alice"), (b, "bob")] {
                let first = try await Tool.run(
                    ["sync", "--store", store, "--server", fixture.server.baseURL.absoluteString, "--project", Fixture.project, "--user", user],
                    environment: environment)
                #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
            }
            let watchers = [try Watcher(store: a, password: TestServer.password), try Watcher(store: b, password: TestServer.password)]

            #expect(try await Tool.run(["put", "--store", a, "notes", "from-a", #"{"title": "written in a"}"#]).status == 0)
            #expect(try await Tool.run(["put", "--store", b, "notes", "from-b", #"{"title": "written in b"}"#]).status == 0)
            let converged = try await Self.eventually {
                let (left, right) = (try await Self.titles(a), try await Self.titles(b))
                return left == right && left.count == 2
            }
            let (left, right) = (try await Self.titles(a), try await Self.titles(b))
            #expect(converged, "a: \(left), b: \(right)\n\(watchers[0].printed)\n\(watchers[1].printed)")

            // The server's port closes; a write waits; the port opens again and the stores converge by themselves.
            await fixture.server.embedded.stopListening()
            #expect(try await Tool.run(["put", "--store", b, "notes", "from-a", #"{"title": "edited in b while the server was down"}"#]).status == 0)
            try await Task.sleep(for: .milliseconds(500))
            try await fixture.server.embedded.startListening()
            let healed = try await Self.eventually {
                try await Self.titles(a)["from-a"] == "edited in b while the server was down"
            }
            #expect(healed, "\(watchers[0].printed)\n\(watchers[1].printed)")

            for watcher in watchers {
                #expect(await watcher.interrupt() == 0)
                #expect(watcher.printed.contains("synced: pushed"))
                #expect(watcher.printed.contains("stopped"))
            }
            let status = try await Tool.run(["status", "--store", a])
            #expect(status.status == 0, "\(status.stdout)\(status.stderr)")
            #expect(status.stdout.hasPrefix("up-to-date"), "\(status.stdout)")
            let json = try await Tool.run(["status", "--store", a, "--json"])
            let report = try JSONValue(parsing: json.stdout)
            #expect(report["verdict"] == "up-to-date")
            #expect(!json.stdout.contains("edited in b"), "the report holds no record data")
            #expect(!json.stdout.contains(TestServer.password))
        }
    }

    @Test("cairn query --collection runs the filter language offline: where, sort, limit, count, and clear errors")
    func queryCollection() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let store = Fixture.temporaryStorePath()
            let first = try await Tool.run(
                ["sync", "--store", store, "--server", fixture.server.baseURL.absoluteString, "--project", Fixture.project, "--user", "alice"],
                environment: ["CAIRN_PASSWORD": TestServer.password])
            #expect(first.status == 0)
            for (id, title, count) in [("a", "Fire exit", 3), ("b", "fire alarm", 1), ("c", "Roof", 2)] {
                #expect(try await Tool.run(["put", "--store", store, "notes", id, #"{"title": "\#(title)", "count": \#(count)}"#]).status == 0)
            }
            let found = try await Tool.run([
                "query", "--store", store, "--collection", "notes", "--where", #"{"field": "title", "op": "like", "value": "FIRE%"}"#, "--sort=-count",
            ])
            #expect(found.status == 0, "\(found.stdout)\(found.stderr)")
            let records = try JSONValue(parsing: found.stdout)["result"]?["records"]?.arrayValue ?? []
            #expect(records.map { $0["id"] } == ["a", "b"])
            #expect(records.first?["pending"] == true)
            let counted = try await Tool.run(["query", "--store", store, "--collection", "notes", "--where", #"{"not": {"field": "count", "op": "gt", "value": 1}}"#, "--count"])
            #expect(try JSONValue(parsing: counted.stdout)["result"]?["count"] == 1)
            let limited = try await Tool.run(["query", "--store", store, "--collection", "notes", "--sort", "count", "--limit", "1"])
            #expect(try JSONValue(parsing: limited.stdout)["result"]?["records"]?.arrayValue?.first?["id"] == "b")
            let bad = try await Tool.run(["query", "--store", store, "--collection", "notes", "--where", #"{"field": "nope", "op": "eq", "value": 1}"#])
            #expect(bad.status == 1)
            #expect(bad.stdout.contains("validation_failed"))
            let search = try await Tool.run(["query", "--store", store, "--collection", "notes", "--search", "fire"])
            #expect(search.status == 1)
            #expect(search.stdout.contains("full-text"))
            #expect(try await Tool.run(["query", "--store", store]).status != 0)
        }
    }
}
