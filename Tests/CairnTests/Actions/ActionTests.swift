import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// Actions from the SDK: `call` online, and `enqueue` offline, in order with the device's writes, sent once per
/// idempotency key however often the upload is retried, with its outcome kept on the device.
@Suite("Actions from devices", .timeLimit(.minutes(20)))
struct ActionTests {
    /// Runs `body` with the standard fixture and a backend answering with `handler`.
    static func withBackend(
        _ handler: @escaping @Sendable (Fixture, TestActionBackend.Call) async throws -> StubHTTPServer.Reply,
        _ body: (Fixture, TestActionBackend) async throws -> Void
    ) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await fixture.withActionBackend({ call in try await handler(fixture, call) }) { backend in try await body(fixture, backend) }
        }
    }

    /// A backend that answers the title note `arguments.noteId` has on the server (read through the server, as
    /// `ada`), or refuses with `arguments.fail` as its status.
    static let reader: @Sendable (Fixture, TestActionBackend.Call) async throws -> StubHTTPServer.Reply = { fixture, call in
        if let status = call.arguments["fail"]?.integerValue { return .json(["error": ["message": .string("no, \(status)")]], status: Int(status)) }
        let notes = try await fixture.pullAll("ada", "notes").changes
        let id = call.arguments["noteId"]?.stringValue
        let title = notes.last { $0.id == id }?.record?.data["title"] ?? nil
        return .json(["seen": title ?? .null, "user": call.caller["user"] ?? .null, "device": call.caller["device"] ?? .null])
    }

    @Test("online: the backend's answer comes back; a refusal throws action_failed with its status; a reader and an unknown action are refused")
    func online() async throws {
        try await Self.withBackend(Self.reader) { fixture, backend in
            let alice = try await fixture.client("alice")
            let rita = try await fixture.client("rita")
            try alice.save("notes", id: "n-1", data: ["title": "Check exits"])
            try await alice.sync()
            #expect(try await alice.call("closeJob", arguments: ["noteId": "n-1"]) == ["seen": "Check exits", "user": "alice", "device": "test-alice"])
            let signed = backend.calls.allSatisfy { $0.signatureIsValid }
            #expect(signed)
            do {
                _ = try await alice.call("closeJob", arguments: ["fail": 409])
                Issue.record("a refusal throws")
            } catch let error as CairnError {
                #expect(error.code == .actionFailed)
                #expect(error.httpStatus == 502)
                #expect(error.details?["status"] == 409)
                #expect(error.message.contains("no, 409"))
                #expect(!error.isRetryable)
            }
            await #expect { try await rita.call("closeJob") } throws: { ($0 as? CairnError)?.code == .forbidden }
            #expect(try await rita.call("lookUp", arguments: ["noteId": "n-1"])["seen"] == "Check exits")
            await #expect { try await alice.call("openJob") } throws: { ($0 as? CairnError)?.code == .notFound }
            #expect(backend.calls.count == 3)
        }
    }

    @Test("offline: a call queued behind a save is sent after it, and a write made after the call waits for its outcome")
    func queuedInOrder() async throws {
        try await Self.withBackend(Self.reader) { fixture, backend in
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network)
            network.isOnline = false
            try alice.save("notes", id: "n-1", data: ["title": "before"])
            let key = try await alice.enqueue(action: "closeJob", arguments: ["noteId": "n-1"])
            try alice.patch("notes", id: "n-1", ["title": "after"])
            // The patch is not folded into the save: the call's backend must see the note as it was.
            #expect(try alice.pendingOperations().count == 2)
            #expect(try alice.queuedActions().map(\.key) == [key])
            #expect(alice.hasPendingUpload)
            await #expect(throws: CairnError.self) { try await alice.sync() }
            #expect(backend.calls.isEmpty)

            network.isOnline = true
            let summary = try await alice.sync()
            #expect(summary.actions == 1)
            #expect(summary.pushed == 2)
            let results = try await alice.actionResults()
            #expect(results.map(\.key) == [key])
            #expect(results.first?.result == ["seen": "before", "user": "alice", "device": "test-alice"])
            #expect(results.first?.arguments == ["noteId": "n-1"])
            #expect(results.first?.succeeded == true)
            #expect(backend.calls.map(\.idempotencyKey) == [key])
            #expect(try alice.queuedActions().isEmpty)
            #expect(try alice.pendingOperations().isEmpty)
            #expect(try await fixture.pullAll("ada", "notes").changes.last?.record?.data["title"] == "after")
            #expect(try await alice.removeActionResults() == 1)
            #expect(try await alice.actionResults().isEmpty)
        }
    }

    @Test("a write that meets a conflict keeps its place: the call queued after it is sent after the resolution")
    func callWaitsForResolution() async throws {
        try await Self.withBackend({ fixture, call in
            let tasks = try await fixture.pullAll("ada", "tasks").changes
            return .json(["seen": tasks.last { $0.id == "t-1" }?.record?.data["title"] ?? .null])
        }) { fixture, backend in
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network)
            try alice.save("tasks", id: "t-1", data: ["title": "first", "rank": 1])
            try await alice.sync()
            let first = try #require(try await fixture.pullAll("ada", "tasks").changes.last?.record?.version)
            _ = try await fixture.push("bob", [SyncOperation(opId: newOpID(), collection: "tasks", id: "t-1", op: .patch, baseVersion: first, data: ["rank": 2])])
            network.isOnline = false
            try alice.patch("tasks", id: "t-1", ["title": "mine"])
            let key = try await alice.enqueue(action: "closeJob", arguments: ["taskId": "t-1"])
            network.isOnline = true
            // The patch meets bob's change (a conflict the default resolver merges); the merged write is uploaded
            // before the call, however many syncs that takes.
            while try !alice.queuedActions().isEmpty { try await alice.sync() }
            let results = try await alice.actionResults()
            #expect(results.map(\.key) == [key])
            #expect(results.first?.result == ["seen": "mine"])
            #expect(backend.calls.count == 1)
            #expect(try await fixture.pullAll("ada", "tasks").changes.last?.record?.data == ["title": "mine", "rank": 2])
        }
    }

    @Test("a queued call reaches the backend once across retried uploads whose answers were lost, and across a reopened store")
    func sentOnce() async throws {
        try await Self.withBackend(Self.reader) { fixture, backend in
            let path = Fixture.temporaryStorePath()
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", store: .file(path), network: network)
            try alice.save("notes", id: "n-1", data: ["title": "before"])
            let key = try await alice.enqueue(action: "closeJob", arguments: ["noteId": "n-1"])
            try alice.save("notes", id: "n-2", data: ["title": "later"])
            // Every call reaches the server, and every answer is lost on the way back.
            network.loseResponses(1000, whenPathContains: "/actions/")
            for _ in 0..<2 {
                await #expect(throws: CairnError.self) { try await alice.sync() }
            }
            #expect(backend.calls.count == 1)
            #expect(try alice.queuedActions().first?.attempts == 2)
            // The write made after the call waits for its outcome.
            #expect(try alice.pendingOperations().map(\.recordID) == ["n-2"])
            try await alice.close()

            let reopened = try await fixture.client("alice", store: .file(path))
            #expect(try reopened.queuedActions().map(\.key) == [key])
            try await reopened.sync()
            #expect(backend.calls.count == 1)
            #expect(try await reopened.actionResults().first?.result?["seen"] == "before")
            #expect(try reopened.pendingOperations().isEmpty)
            #expect(try reopened.queuedActions().isEmpty)
        }
    }

    @Test("a reader's queued call and a backend's refusal are kept as error results; an unreachable backend keeps the call queued")
    func refusals() async throws {
        try await Self.withBackend(Self.reader) { fixture, backend in
            let rita = try await fixture.client("rita")
            let refused = try await rita.enqueue(action: "closeJob")
            try await rita.sync()
            let ritaResults = try await rita.actionResults()
            #expect(ritaResults.map(\.key) == [refused])
            #expect(ritaResults.first?.error?.code == .forbidden)
            #expect(ritaResults.first?.httpStatus == 403)
            #expect(ritaResults.first?.result == Optional<JSONValue>.none)
            #expect(ritaResults.first?.succeeded == false)
            #expect(try rita.queuedActions().isEmpty)

            let alice = try await fixture.client("alice")
            let failing = try await alice.enqueue(action: "closeJob", arguments: ["fail": 422])
            try await alice.sync()
            let failed = try #require(try await alice.actionResults().first { $0.key == failing })
            #expect(failed.error?.code == .actionFailed)
            #expect(failed.error?.details?["status"] == 422)
            #expect(failed.httpStatus == 502)
            #expect(backend.calls.count == 1)

            try await withClosedLoopbackPort { port in
                try await fixture.server.server.admin.setSchema(project: Fixture.project, Fixture.schema(actions: [
                    ActionSchema(name: "closeJob", url: "http://127.0.0.1:\(port)/close", timeoutSeconds: 1)]))
                let waiting = try await alice.enqueue(action: "closeJob", arguments: ["noteId": "n-1"])
                try alice.save("notes", id: "n-1", data: ["title": "behind the call"])
                await #expect { try await alice.sync() } throws: { ($0 as? CairnError)?.code == .actionFailed && ($0 as? CairnError)?.isRetryable == true }
                #expect(try alice.queuedActions().map(\.key) == [waiting])
                #expect(try alice.pendingOperations().map(\.recordID) == ["n-1"])
            }
            try await fixture.server.server.admin.setSchema(project: Fixture.project, Fixture.schema(actions: [
                ActionSchema(name: "closeJob", url: backend.url)]))
            try await alice.sync()
            #expect(try alice.queuedActions().isEmpty)
            #expect(try alice.pendingOperations().isEmpty)
            // Sent before the save behind it: the backend did not see the note yet.
            #expect(try await alice.actionResults().last?.result?["seen"] == .null)
        }
    }
}
