import CairnProtocol
import CairnTesting
import Foundation
import Testing

@testable import Cairn

@Suite("Pull sources: the feed and download queries apply pages through one path")
struct PullSourcesTests {
    @Test("a record with a pending local change keeps its row and its shadow moves, whether its page came from the feed or a download query")
    func pendingChangeKeptFromEverySource() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let bob = try await fixture.client("bob")
            try alice.create("notes", id: "n", data: ["title": "base"])
            try alice.create("tasks", id: "t", data: ["title": "base", "rank": 1])
            try await alice.sync()
            // Bob pulls notes from their feed and tasks through a download query.
            try await bob.sync()
            try bob.createDownloadQuery(name: "ranked", collection: "tasks", filter: .condition("rank", .gte, 0))
            try await bob.pull()
            #expect(try bob.downloadQuery(named: "ranked")?.recordCount == 1)
            let bases = ["notes": try bob.record("notes", id: "n")?.version, "tasks": try bob.record("tasks", id: "t")?.version]

            try bob.patch("notes", id: "n", ["title": "bob"])
            try bob.patch("tasks", id: "t", ["title": "bob"])
            try alice.patch("notes", id: "n", ["title": "alice"])
            try alice.patch("tasks", id: "t", ["title": "alice"])
            try await alice.sync()

            #expect(try await bob.pull().pulled == 2)
            let status = await bob.status()
            #expect(status.collections["notes"]?.appliedRecords == 1)
            #expect(status.downloadQueries["ranked"]?.appliedRecords == 1)
            for (collection, id) in [("notes", "n"), ("tasks", "t")] {
                let row = try #require(try bob.record(collection, id: id))
                #expect(row.data["title"] == "bob", "\(collection): the row shows the local change")
                #expect(row.hasPendingChanges)
                let server = try #require(try alice.record(collection, id: id))
                let shadow = try #require(try await bob.store.writer.read { db in try bob.store.shadows.shadow(db, collection: collection, id: id) })
                #expect(shadow.serverVersion == server.version, "\(collection): the shadow holds the pulled server state")
                #expect(shadow.serverData?["title"] == "alice")
                #expect(shadow.baseVersion == bases[collection] ?? nil, "\(collection): the local change still builds on the state it was made on")
            }
        }
    }
}
