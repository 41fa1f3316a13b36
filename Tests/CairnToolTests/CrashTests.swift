import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// `cairn sync` killed with SIGKILL at random moments, then run again: nothing lost, nothing twice.
@Suite("Killed in the middle", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"), .serialized)
struct CrashTests {
    /// Runs `cairn sync` and kills it after `delay`; returns true if it finished first.
    func syncKilled(after delay: Duration, store: String, server: URL) async throws -> Bool {
        try await Tool.run(
            ["sync", "--store", store, "--server", server.absoluteString, "--project", Fixture.project, "--user", "alice"],
            environment: ["CAIRN_PASSWORD": TestServer.password], killedAfter: delay)
    }

    func openClient(_ fixture: Fixture, store: String) async throws -> CairnClient {
        try await fixture.client("alice", store: .file(store))
    }

    @Test("a large pull killed at random moments and rerun ends with a replica equal to the server")
    func killedPull() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let total = 20_000
            for start in stride(from: 0, to: total, by: 1000) {
                _ = try await fixture.push("bob", (start..<start + 1000).map {
                    SyncOperation(opId: "seed-\($0)", collection: "logs", id: "log-\($0)", op: .create, data: ["message": .string("entry \($0)")])
                })
            }
            let store = Fixture.temporaryStorePath()
            var random = SystemRandomNumberGenerator()
            var kills = 0
            for _ in 0..<6 {
                let finished = try await syncKilled(after: .milliseconds(Int.random(in: 40...300, using: &random)), store: store, server: fixture.server.baseURL)
                if !finished { kills += 1 }
            }
            // With the flags again, as after a first attempt that may have been killed before the store noted its server.
            let rerun = try await Tool.run(
                ["sync", "--store", store, "--server", fixture.server.baseURL.absoluteString, "--project", Fixture.project, "--user", "alice"],
                environment: ["CAIRN_PASSWORD": TestServer.password])
            #expect(rerun.status == 0, "\(rerun.stderr)")
            let client = try await openClient(fixture, store: store)
            #expect(try client.rows("SELECT count(*) AS n FROM logs") == [["n": .integer(Int64(total))]])
            #expect(try await client.verify("logs").matches)
            print("killed pull: \(kills) kills before the final run")
            #expect(kills >= 1)
        }
    }

    @Test("a large push killed at random moments and rerun applies every change exactly once")
    func killedPush() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let total = 5_000
            let store = Fixture.temporaryStorePath()
            do {
                let client = try await openClient(fixture, store: store)
                try client.writeBatch { batch in
                    for index in 0..<total { try batch.create("logs", id: "local-\(index)", data: ["message": .string("offline \(index)")]) }
                }
            }
            var random = SystemRandomNumberGenerator()
            var kills = 0
            for _ in 0..<6 {
                if try await !syncKilled(after: .milliseconds(Int.random(in: 40...500, using: &random)), store: store, server: fixture.server.baseURL) {
                    kills += 1
                }
            }
            let rerun = try await Tool.run(["sync", "--store", store], environment: ["CAIRN_PASSWORD": TestServer.password])
            #expect(rerun.status == 0, "\(rerun.stderr)")
            let server = try await fixture.pullAll("rita", "logs").changes
            #expect(server.count == total)
            #expect(Set(server.map(\.id)).count == total)
            // Only creates happened: one version each means none was applied twice.
            #expect(server.map(\.version).max() == Int64(total))
            let counts = try await fixture.server.server.storage.operationCounts(project: Fixture.project)
            #expect(counts.head == Int64(counts.applied))
            let client = try await openClient(fixture, store: store)
            #expect(!client.hasPendingUpload)
            #expect(try await client.verify("logs").matches)
            print("killed push: \(kills) kills before the final run")
            #expect(kills >= 1)
        }
    }
}

@Suite("Two stores and a server through the command line", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"))
struct CommandLineSyncTests {
    @Test("put and delete work offline, sync moves them between stores, query prints the status/result JSON shape")
    func putSyncQuery() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let first = Fixture.temporaryStorePath(), second = Fixture.temporaryStorePath()
            let environment = ["CAIRN_PASSWORD": TestServer.password]
            let server = ["--server", fixture.server.baseURL.absoluteString, "--project", Fixture.project, "--user", "alice"]
            let notSynced = try await Tool.run(["put", "--store", first, "notes", "n1", #"{"title": "x"}"#], environment: environment)
            #expect(notSynced.status != 0)
            #expect(notSynced.stderr.contains("has not synced yet") || notSynced.stderr.contains("never synced"))
            #expect(try await Tool.run(["sync", "--store", first] + server, environment: environment).status == 0)
            #expect(try await Tool.run(["sync", "--store", second] + server, environment: environment).status == 0)
            // Offline from here: the store remembers the server, and put needs no password.
            let put = try await Tool.run(["put", "--store", first, "notes", "n1", #"{"title": "Check exits", "done": false, "count": 3}"#])
            #expect(put.status == 0, "\(put.stderr)")
            #expect(try await Tool.run(["put", "--store", first, "notes", "n2", #"{"title": "Gone soon"}"#]).status == 0)
            #expect(try await Tool.run(["delete", "--store", first, "notes", "n2"]).status == 0)
            let bad = try await Tool.run(["put", "--store", first, "notes", "n3", #"{"title": 5}"#])
            #expect(bad.status != 0)
            #expect(bad.stderr.contains("must be a string"))
            #expect(try await Tool.run(["put", "--store", first, "notes", "n3", "{not json"]).stderr.contains("not valid JSON"))
            #expect(try await Tool.run(["sync", "--store", first], environment: environment).status == 0)
            #expect(try await Tool.run(["sync", "--store", second], environment: environment).status == 0)
            let query = try await Tool.run(["query", "--store", second, "SELECT id, title, done, count FROM notes ORDER BY id"])
            #expect(query.status == 0)
            #expect(query.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                    == #"{"status":"ok","result":{"database":{"records":[{"count":3,"done":0,"id":"n1","title":"Check exits"}]}}}"#)
            let broken = try await Tool.run(["query", "--store", second, "SELECT nope FROM notes"])
            #expect(broken.status != 0)
            #expect(broken.stdout.hasPrefix(#"{"status":"error""#))
            let noPassword = try await Tool.run(["sync", "--store", second])
            #expect(noPassword.status != 0)
            #expect(noPassword.stderr.contains("CAIRN_PASSWORD"))
        }
    }

    @Test("bench --json ends with one JSON object holding the figures")
    func benchJSON() async throws {
        let output = try await Tool.run(["bench", "--records", "300", "--batch", "100", "--page", "100", "--json"])
        #expect(output.status == 0, "\(output.stderr)")
        let last = try #require(output.stdout.split(separator: "\n").last)
        let figures = try JSONValue(parsing: String(last))
        for key in ["pushOpsPerSecond", "pullRecordsPerSecond", "incrementalPullMilliseconds", "clientPeakRSSBytes"] {
            #expect((figures[key]?.numberValue ?? 0) > 0, "\(key)")
        }
    }

    @Test("bench transports prints one table with both transports and ends with their figures as JSON")
    func benchTransports() async throws {
        let output = try await Tool.run(["bench", "transports", "--records", "200", "--file-megabytes", "2", "--rounds", "1", "--json"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("AsyncHTTPClient") && output.stdout.contains("URLSession"))
        let last = try #require(output.stdout.split(separator: "\n").last)
        let figures = try JSONValue(parsing: String(last))
        for measure in ["push", "pull", "upload", "download"] {
            for transport in ["asynchttpclient", "urlsession"] {
                #expect((figures["\(measure)Seconds_\(transport)"]?.numberValue ?? 0) > 0, "\(measure) \(transport)")
            }
        }
    }
}
