import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

struct Note: Codable, Equatable, Sendable {
    var id: String?
    var title: String
    var done: Bool?
    var due: Date?
    var count: Int?
    var score: Double?
    var tags: [String: [Int?]]?
}

@Suite("Offline writes and sync")
struct OfflineSyncTests {
    @Test("writes made offline are kept, uploaded once online, and reach another client")
    func offlineThenSync() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network)
            let bob = try await fixture.client("bob")

            network.isOnline = false
            try alice.create("notes", id: "n1", data: ["title": "Buy milk", "done": false])
            try alice.patch("notes", id: "n1", ["done": true])
            try alice.create("notes", id: "n2", data: ["title": "Walk"])
            try alice.delete("notes", id: "n2")
            try alice.save("tasks", id: "t1", data: ["title": "Call", "rank": 2])
            #expect(try alice.pendingOperations().map(\.kind) == [.create, .create])
            #expect(try alice.record("notes", id: "n1")?.data == ["title": "Buy milk", "done": true])
            #expect(try alice.record("notes", id: "n1")?.hasPendingChanges == true)
            await #expect(throws: CairnError.self) { try await alice.sync() }
            #expect(alice.hasPendingUpload)
            #expect(await alice.status().lastError?.code == .networkUnavailable)

            network.isOnline = true
            let summary = try await alice.sync()
            #expect(summary.pushed == 2)
            #expect(!alice.hasPendingUpload)
            #expect(try alice.record("notes", id: "n1")?.hasPendingChanges == false)
            #expect(try alice.record("notes", id: "n1")?.version == 1)

            try await bob.sync()
            #expect(try bob.record("notes", id: "n1")?.data == ["title": "Buy milk", "done": true])
            #expect(try bob.record("notes", id: "n2") == nil)
            #expect(try bob.record("tasks", id: "t1")?.data["rank"] == 2)
            for client in [alice, bob] {
                for collection in ["notes", "tasks", "logs"] {
                    #expect(try await client.verify(collection).matches)
                }
            }
            let history = try alice.history()
            #expect(history.contains { $0.kind == .sync && $0.summary.pushed == 2 && $0.error == nil && $0.duration != nil })
            #expect(history.contains { $0.kind == .sync && $0.error?.contains("network_unavailable") == true })
        }
    }

    @Test("Codable records round-trip arrays, nested objects, optionals and dates exactly")
    func codable() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let bob = try await fixture.client("bob")
            let due = Date(timeIntervalSinceReferenceDate: 815_000_000.123_456_7)
            let note = Note(id: nil, title: "Ünïcode ✓", done: nil, due: due, count: 7, score: 0.1, tags: ["a": [1, nil, 3], "b": []])
            try alice.save(note, in: "notes", id: "n1")
            var expected = note
            expected.id = "n1"
            #expect(try alice.get(Note.self, from: "notes", id: "n1") == expected)
            try await alice.sync()
            try await bob.sync()
            #expect(try bob.get(Note.self, from: "notes", id: "n1") == expected)
            #expect(try bob.all(Note.self, Query("notes").filter(.condition("count", .gte, 7))).count == 1)
        }
    }

    @Test("queries filter, sort and limit locally; raw SQL answers rows and the status/result JSON of queryJSON")
    func queries() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            for index in 1...10 {
                try alice.save("notes", id: "n\(index)", data: ["title": .string("note \(index)"), "done": .bool(index % 2 == 0), "count": .integer(Int64(index)),
                                                               "tags": ["x", .integer(Int64(index))]])
            }
            let open = try alice.records(Query("notes").filter(.condition("done", .eq, false)).sorted(by: "count", ascending: false).limit(3))
            #expect(open.map(\.id) == ["n9", "n7", "n5"])
            #expect(try alice.records(Query("notes").filter(.condition("tags", .contains, 4))).map(\.id) == ["n4"])
            #expect(try alice.records(Query("notes").filter(.condition("title", .like, "NOTE 1%"))).map(\.id) == ["n1", "n10"])
            #expect(throws: CairnError.self) { try alice.records(Query("notes").filter(.condition("nope", .eq, 1))) }
            let table = try alice.tableName(for: "notes")
            #expect(table == "notes")
            let rows = try alice.rows("SELECT id, count FROM \(table) WHERE done = ? ORDER BY count LIMIT 2", arguments: [true])
            #expect(rows == [["id": "n2", "count": 2], ["id": "n4", "count": 4]])
            let json = alice.queryJSON("SELECT id FROM notes WHERE count = 3")
            #expect(json == #"{"status":"ok","result":{"database":{"records":[{"id":"n3"}]}}}"#)
            #expect(alice.queryJSON("DELETE FROM notes").contains(#""status":"error""#))
            #expect(try alice.records(Query("notes")).count == 10)
        }
    }

    @Test("observing a query emits on local writes and on pulled changes")
    func observation() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let bob = try await fixture.client("bob")
            var updates = bob.observe(Query("notes").filter(.condition("done", .eq, false))).makeAsyncIterator()
            #expect(try await updates.next()?.count == 0)
            try bob.create("notes", id: "local", data: ["title": "mine", "done": false])
            #expect(try await updates.next()?.map(\.id) == ["local"])
            try alice.create("notes", id: "remote", data: ["title": "theirs", "done": false])
            try await alice.sync()
            try await bob.pull(["notes"])
            #expect(try await updates.next()?.map(\.id) == ["local", "remote"])
        }
    }
}
