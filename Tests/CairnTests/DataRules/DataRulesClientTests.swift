import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Data rules seen from the SDK")
struct DataRulesClientTests {
    @Test("a record reassigned away leaves the device; a pending change to it fails as forbidden, and discarding it removes the record")
    func reassignedAway() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            let alice = try await fixture.client("alice")
            try await withCleanup({ try? await alice.close() }) {
                _ = try await alice.sync()
                #expect(try alice.records(Query("jobs")).map(\.id) == ["j1"])

                // j1 goes to carl while alice edits it offline, and j7 (hers, new) arrives.
                _ = try alice.patch("jobs", id: "j1", ["title": "checked the pump"])
                _ = try await fixture.push("ada", [
                    SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .patch, data: ["assignee": "carl"]),
                    RulesFixture.job("j7", assignee: "alice", region: "west"),
                ])
                let summary = try await alice.sync()
                #expect(summary.failed == 1)
                let failed = try alice.failedOperations()
                #expect(failed.map(\.recordID) == ["j1"])
                #expect(failed.first?.error.code == .forbidden)
                // Her change is still on the device, beside the new job, until she decides.
                #expect(Set(try alice.records(Query("jobs")).map(\.id)) == ["j1", "j7"])
                try alice.discardFailed(try #require(failed.first).id)
                #expect(try alice.records(Query("jobs")).map(\.id) == ["j7"])
                // Nothing comes back at the next sync.
                _ = try await alice.sync()
                #expect(try alice.records(Query("jobs")).map(\.id) == ["j7"])
            }
        }
    }

    @Test("a change of claims moves only the records whose verdict changed, and the device ends with exactly what it may read")
    func claimsChange() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            let bob = try await fixture.client("bob")
            try await withCleanup({ try? await bob.close() }) {
                #expect(try await bob.sync().pulled == 3)
                #expect(Set(try bob.records(Query("jobs")).map(\.id)) == ["j1", "j3", "j4"])
                try await fixture.server.server.admin.setClaims(user: "bob", project: "field", ["regions": ["south", "east"]])
                // j1 and j4 go (north), j2 and j5 arrive; j3, his own, is not downloaded again.
                #expect(try await bob.sync().pulled == 4)
                #expect(Set(try bob.records(Query("jobs")).map(\.id)) == ["j2", "j3", "j5"])
                let verification = try await bob.verify("jobs")
                #expect(verification.matches)
            }
        }
    }

    @Test("reads by id and download queries from the SDK get only what the read rule allows")
    func readsByIDAndDownloadQueries() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            let bob = try await fixture.client("bob")
            try await withCleanup({ try? await bob.close() }) {
                // j4 (north) is his to read; j2 (carl's, south) is not, though it exists.
                #expect(try await bob.fetchFromServer("jobs", id: "j4")?.id == "j4")
                #expect(try await bob.fetchFromServer("jobs", id: "j2") == nil)
                // A download query for the south gets his own southern job only, not carl's.
                try bob.createDownloadQuery(name: "south", collection: "jobs", filter: .condition("region", .eq, "south"))
                try await bob.pull()
                #expect(try bob.records(Query("jobs")).map(\.id) == ["j3"])
            }
        }
    }
}
