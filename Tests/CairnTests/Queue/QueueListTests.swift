import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("The queue as a list: filters, order and bulk actions")
struct QueueListTests {
    @Test("pending operations filtered by collection and ids, newest first, limited; several cancelled at once")
    func pendingFilterAndCancel() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try await alice.sync()
            for index in 1...4 { try alice.create("notes", id: "n-\(index)", data: ["title": .string("note \(index)")]) }
            try alice.create("tasks", id: "t-1", data: ["title": "task"])

            #expect(try alice.pendingOperations().map(\.recordID) == ["n-1", "n-2", "n-3", "n-4", "t-1"])
            #expect(try alice.pendingOperations(OperationFilter(collection: "notes", newestFirst: true)).map(\.recordID) == ["n-4", "n-3", "n-2", "n-1"])
            #expect(try alice.pendingOperations(OperationFilter(ids: ["n-2", "t-1"])).map(\.recordID) == ["n-2", "t-1"])
            #expect(try alice.pendingOperations(OperationFilter(collection: "notes", limit: 2)).map(\.recordID) == ["n-1", "n-2"])

            #expect(try alice.cancelPending(OperationFilter(collection: "notes", ids: ["n-1", "n-3"])) == 2)
            #expect(try alice.record("notes", id: "n-1") == nil, "a cancelled create leaves nothing")
            #expect(try alice.pendingOperations().map(\.recordID) == ["n-2", "n-4", "t-1"])
            #expect(try await alice.sync().pushed == 3)
            #expect(try await fixture.pullAll("rita", "notes").changes.map(\.id).sorted() == ["n-2", "n-4"])
        }
    }

    /// The schema with a write rule on `tasks`: a rank below `limit`.
    static func ranksBelow(_ limit: Int64) -> Schema {
        var schema = Fixture.schema
        schema.collections[1].rules = DataRules(write: .condition("rank", .lt, .integer(limit)))
        return schema
    }

    @Test("failed operations filtered, retried several at once after the cause is fixed, and discarded several at once")
    func failedRetryAndDiscard() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let admin = fixture.server.server.admin
            try await admin.setSchema(project: Fixture.project, Self.ranksBelow(100))
            let alice = try await fixture.client("alice")
            try await alice.sync()
            for index in 1...4 { try alice.create("tasks", id: "t-\(index)", data: ["title": "x", "rank": .integer(Int64(index) * 100)]) }
            #expect(try await alice.sync().failed == 4)

            #expect(try alice.failedOperations(OperationFilter(ids: ["t-2", "t-4"], newestFirst: true)).map(\.recordID) == ["t-4", "t-2"])
            #expect(try alice.failedOperations(OperationFilter(collection: "notes")).isEmpty)
            #expect(try alice.discardFailed(OperationFilter(ids: ["t-1", "t-2"])) == 2)
            #expect(try alice.record("tasks", id: "t-1") == nil)
            #expect(try alice.failedOperations().map(\.recordID) == ["t-3", "t-4"])

            // The rule is relaxed: the rest goes up as it was, in the order it was made.
            try await admin.setSchema(project: Fixture.project, Self.ranksBelow(1000))
            #expect(try alice.retryFailed(OperationFilter(collection: "tasks")) == 2)
            #expect(try alice.failedOperations().isEmpty)
            #expect(try alice.pendingOperations().map(\.recordID) == ["t-3", "t-4"])
            #expect(try await alice.sync().pushed == 2)
            #expect(try await fixture.pullAll("rita", "tasks").changes.map(\.id).sorted() == ["t-3", "t-4"])
        }
    }

    @Test("sync history filtered by kind, time and failure")
    func historyFilter() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network)
            let start = Date()
            try await alice.sync()
            try alice.create("notes", id: "n", data: ["title": "x"])
            try await alice.push()
            try await alice.pull()
            network.isOnline = false
            _ = try? await alice.push()
            network.isOnline = true

            #expect(try alice.history(matching: HistoryFilter(kinds: [.push])).count == 2)
            let failed = try alice.history(matching: HistoryFilter(failedOnly: true))
            #expect(failed.count == 1)
            #expect(failed.first?.kind == .push)
            #expect(try alice.history(matching: HistoryFilter(kinds: [.pull], since: start)).count == 1)
            #expect(try alice.history(matching: HistoryFilter(until: start.addingTimeInterval(-60))).isEmpty)
            #expect(try alice.history(matching: HistoryFilter(), limit: 2).count == 2)
        }
    }
}
