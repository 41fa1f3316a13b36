@testable import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Logging
import Synchronization
import Testing

/// A swift-log backend that keeps every entry, with its metadata, for the test to read.
final class CapturedLog: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
        /// The message and its metadata in one string, to search for anything that must never appear.
        var text: String { "\(message) " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
    }

    private let entries = Mutex<[Entry]>([])
    var all: [Entry] { entries.withLock { $0 } }

    func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "cairn.test") { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    func entries(_ message: String) -> [Entry] { all.filter { $0.message == message } }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let entry = Entry(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" })
            log.entries.withLock { $0.append(entry) }
        }
    }
}

@Suite("The SDK's log through swift-log")
struct SyncLoggingTests {
    /// A value that must appear in no log line unless tracing with data is on.
    static let secret = "SECRET-NOTE-TEXT-7731"

    /// Alice and Bob change one task (a conflict) and Alice writes a note the server's schema now refuses.
    static func syncWithConflictAndRefusal(tracing: Bool, withData: Bool, format: TraceFormat = .compact) async throws -> (CapturedLog, token: String) {
        let fixture = try await Fixture.start()
        return try await withCleanup({ await fixture.stop() }) {
            let log = CapturedLog()
            let alice = try await fixture.client("alice") {
                $0.logger = log.logger()
                $0.traceRequests = tracing
                $0.traceWithData = withData
                $0.traceFormat = format
            }
            let bob = try await fixture.client("bob")
            try alice.create("tasks", id: "t", data: ["title": .string(secret), "rank": 1])
            try await alice.sync()
            try await bob.sync()
            try bob.patch("tasks", id: "t", ["rank": 5])
            try await bob.sync()
            try alice.patch("tasks", id: "t", ["rank": 9])
            try alice.save("notes", id: "n1", data: ["title": .string(secret), "priority": "high"])
            var grown = Fixture.schema
            grown.collections[0].fields.append(FieldSchema(name: "priority", type: .integer))
            try await fixture.server.server.admin.setSchema(project: Fixture.project, grown)
            let summary = try await alice.sync()
            #expect(summary.conflicts == 1)
            #expect(summary.failed == 1)
            return (log, try await alice.auth.token())
        }
    }

    @Test("a sync with a conflict and a refusal logs both, with ids and codes, and no record data, token or password")
    func conflictAndRefusal() async throws {
        let (log, token) = try await Self.syncWithConflictAndRefusal(tracing: false, withData: false)
        let conflict = try #require(log.entries("conflict resolved").first)
        #expect(conflict.level == .notice)
        #expect(conflict.metadata["cairn.collection"] == "tasks")
        #expect(conflict.metadata["cairn.id"] == "t")
        let refusal = try #require(log.entries("change refused").first)
        #expect(refusal.level == .warning)
        #expect(refusal.metadata["cairn.id"] == "n1")
        #expect(refusal.metadata["cairn.error"] == "validation_failed")
        let completed = try #require(log.entries("sync completed").last)
        #expect(completed.level == .info)
        #expect(completed.metadata["cairn.conflicts"] == "1")
        #expect(completed.metadata["cairn.refused"] == "1")
        #expect(completed.metadata["cairn.project"] == .some(Fixture.project))
        #expect(!log.entries("batch pushed").isEmpty)
        #expect(!log.entries("page pulled").isEmpty)
        #expect(log.entries("request").isEmpty, "requests are traced only when asked")
        for entry in log.all {
            #expect(!entry.text.contains(Self.secret))
            #expect(!entry.text.contains(token))
            #expect(!entry.text.contains(TestServer.password))
        }
    }

    @Test("request tracing logs method, path, status and time; record data only with traceWithData; secrets never")
    func requestTracing() async throws {
        let (plain, plainToken) = try await Self.syncWithConflictAndRefusal(tracing: true, withData: false)
        let batch = try #require(plain.entries("request").first { $0.metadata["cairn.path"]?.hasSuffix("/batch") == true })
        #expect(batch.metadata["cairn.method"] == "POST")
        #expect(batch.metadata["cairn.status"] == "200")
        #expect(batch.metadata["cairn.ms"] != nil)
        #expect(batch.level == .debug)
        #expect(!plain.all.contains { $0.text.contains(Self.secret) || $0.text.contains(plainToken) })

        let (detailed, token) = try await Self.syncWithConflictAndRefusal(tracing: true, withData: true)
        #expect(detailed.all.contains { $0.text.contains(Self.secret) }, "with data, bodies are traced")
        #expect(!detailed.all.contains { $0.text.contains(token) })
        #expect(!detailed.all.contains { $0.text.contains(TestServer.password) })
        #expect(detailed.entries("request").contains { $0.metadata["cairn.path"] == "/v1/auth/login" && $0.metadata["cairn.response"] == nil })
    }

    @Test("pretty traces: one readable block per request, JSON bodies indented with sorted keys only with data; secrets never")
    func prettyTracing() async throws {
        let (plain, _) = try await Self.syncWithConflictAndRefusal(tracing: true, withData: false, format: .pretty)
        let batch = try #require(plain.all.first { $0.metadata["cairn.path"]?.hasSuffix("/batch") == true })
        #expect(batch.message.hasPrefix("POST \(batch.metadata["cairn.path"]!) → 200 in "), "\(batch.message)")
        #expect(batch.message.contains(" sent, ") && batch.message.hasSuffix(" received"))
        #expect(batch.metadata["cairn.status"] == "200")
        #expect(!plain.all.contains { $0.text.contains(Self.secret) || $0.message.contains("body:") })

        let (detailed, token) = try await Self.syncWithConflictAndRefusal(tracing: true, withData: true, format: .pretty)
        let pushed = try #require(detailed.all.first { $0.metadata["cairn.path"]?.hasSuffix("/batch") == true && $0.message.contains(Self.secret) })
        let lines = pushed.message.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let bodyStart = try #require(lines.firstIndex(of: "request body:"))
        #expect(lines[bodyStart + 1] == "  {")
        #expect(lines.contains("response body:"))
        #expect(lines[bodyStart + 2] == "    \"operations\" : [", "keys indented one level inside the body: \(pushed.message)")
        // Sorted keys: an operation's "collection", "data", "id", "op", "opId", in that order.
        let keys = lines.filter { $0.hasPrefix("        \"") && !$0.hasPrefix("         ") }.map { $0.split(separator: "\"")[1] }
        #expect(Array(keys.prefix(5)) == ["collection", "data", "id", "op", "opId"], "\(pushed.message)")
        #expect(pushed.metadata["cairn.request"] == nil && pushed.metadata["cairn.response"] == nil, "bodies in the block only")
        let login = try #require(detailed.all.first { $0.metadata["cairn.path"] == "/v1/auth/login" })
        #expect(!login.message.contains("body:"))
        #expect(!detailed.all.contains { $0.text.contains(token) || $0.text.contains(TestServer.password) })
    }

    @Test("a pretty body: gzip undone, JSON lines each indented, text kept as text, a long body cut saying how much")
    func prettyBodies() throws {
        let json = Data(#"{"b": 1, "a": [true, null]}"#.utf8)
        #expect(PrettyTrace.readable(json) == "{\n  \"a\" : [\n    true,\n    null\n  ],\n  \"b\" : 1\n}")
        #expect(PrettyTrace.readable(try Gzip.compress(json)) == PrettyTrace.readable(json))
        #expect(PrettyTrace.readable(Data("{\"x\":1}\n{\"y\":2}\n".utf8)) == "{\n  \"x\" : 1\n}\n{\n  \"y\" : 2\n}")
        #expect(PrettyTrace.readable(Data("not json".utf8)) == "not json")
        let long = PrettyTrace.readable(Data(repeating: UInt8(ascii: "x"), count: PrettyTrace.bodyLimit + 2500))
        #expect(long.hasSuffix("\n… 2.5 KB more"))
        #expect(PrettyTrace.size(340) == "340 B" && PrettyTrace.size(1234) == "1.2 KB" && PrettyTrace.size(3_400_000) == "3.4 MB")
    }

    @Test("a sync that cannot reach the server logs each retry with its cause, then the failure")
    func retriesAndCauses() async throws {
        let fixture = try await Fixture.start()
        return try await withCleanup({ await fixture.stop() }) {
            let log = CapturedLog()
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network) {
                $0.logger = log.logger(level: .notice)
                $0.retry = RetryPolicy(initialDelay: .milliseconds(1), maximumDelay: .milliseconds(5), maximumAttempts: 3)
            }
            try alice.create("notes", id: "n", data: ["title": "x"])
            // Only the sync's own retries count: on a loaded machine a request made while opening may be retried too.
            let mark = log.all.count
            network.isOnline = false
            await #expect(throws: CairnError.self) { try await alice.sync() }
            let retries = log.all.dropFirst(mark).filter { $0.message == "request retried" }
            #expect(retries.count == 2, "\(log.all.map(\.text))")
            #expect(retries.allSatisfy { $0.metadata["cairn.error"] == "network_unavailable" && $0.level == .notice })
            let failed = try #require(log.entries("sync failed").first)
            #expect(failed.metadata["cairn.error"] == "network_unavailable")
            #expect(log.all.allSatisfy { $0.level >= .notice }, "the app's level is respected")
        }
    }
}
