import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Online queries: the server's current records, not stored")
struct OnlineQueryTests {
    static let queries: [Query] = [
        Query("notes"),
        Query("notes").filter(.condition("count", .gte, 10)).sorted(by: "count", ascending: false),
        Query("notes").filter(.or([.condition("title", .like, "%7%"), .condition("done", .eq, true)])).sorted(by: "title").limit(5, offset: 2),
        Query("notes").filter(.not(.condition("count", .lt, 30))).limit(3),
        Query("notes").filter(.condition("id", .in, ["n-03", "n-11", "n-40"])),
    ]

    @Test("an online query answers as the local query does on the same data, with a filter, sort, limit and offset")
    func sameAnswersAsLocal() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice") { $0.pageSize = 7 }
            for index in 0..<40 {
                try alice.create("notes", id: String(format: "n-%02d", index), data: [
                    "title": .string("note \(index)"), "count": .integer(Int64(index * 7 % 50)), "done": .bool(index % 3 == 0),
                ])
            }
            try await alice.sync()
            for query in Self.queries {
                let online = try await alice.fetchFromServer(query)
                let local = try alice.records(query)
                #expect(online.map(\.id) == local.map(\.id), "\(query)")
                #expect(online.map(\.data) == local.map(\.data), "\(query)")
                #expect(online.map(\.version) == local.map(\.version), "\(query)")
            }
        }
    }

    @Test("it reads what the server holds now and stores nothing: the local copy, queue and cursors stay as they were")
    func readsNowStoresNothing() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let bob = try await fixture.client("bob")
            try alice.create("notes", id: "a", data: ["title": "first", "count": 1])
            try await alice.sync()
            try await bob.sync()
            try alice.create("notes", id: "b", data: ["title": "second", "count": 2])
            try alice.patch("notes", id: "a", ["count": 5])
            try await alice.sync()

            let online = try await bob.fetchFromServer(Query("notes").sorted(by: "count", ascending: false))
            #expect(online.map(\.id) == ["a", "b"])
            #expect(online.first?.data["count"] == 5)
            #expect(online.allSatisfy { !$0.hasPendingChanges })
            #expect(try bob.records(Query("notes")).map(\.id) == ["a"])
            #expect(try bob.record("notes", id: "a")?.data["count"] == 1)
            // The next pull still brings both changes: the cursor did not move.
            #expect(try await bob.pull(["notes"]).pulled == 2)
        }
    }

    @Test("full-text search and local-only collections are refused with invalid_argument; offline is network_unavailable")
    func refusals() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network) {
                $0.localCollections = [CollectionSchema(name: "drafts", fields: [FieldSchema(name: "text", type: .string)])]
            }
            let search = await #expect(throws: CairnError.self) { try await alice.fetchFromServer(Query("notes").matching("milk")) }
            #expect(search?.code == .invalidArgument)
            let local = await #expect(throws: CairnError.self) { try await alice.fetchFromServer(Query("drafts")) }
            #expect(local?.code == .invalidArgument)
            network.isOnline = false
            let offline = await #expect(throws: CairnError.self) { try await alice.fetchFromServer(Query("notes")) }
            #expect(offline?.code == .networkUnavailable)
        }
    }
}
