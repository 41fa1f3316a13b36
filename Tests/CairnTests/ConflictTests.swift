import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Two clients editing the same record")
struct ConflictTests {
    /// alice and bob both hold record `r` at its first version; both go offline and edit.
    func setUp(_ collection: String, resolver: ConflictResolver = .merge(fallback: .server)) async throws
        -> (Fixture, CairnClient, CairnClient)
    {
        let fixture = try await Fixture.start()
        let alice = try await fixture.client("alice") { $0.conflictResolver = resolver }
        let bob = try await fixture.client("bob") { $0.conflictResolver = resolver }
        let data: [String: JSONValue] = collection == "notes" ? ["title": "base", "count": 1] : collection == "tasks" ? ["title": "base", "rank": 1] : ["message": "base"]
        try alice.create(collection, id: "r", data: data)
        try await alice.sync()
        try await bob.sync()
        return (fixture, alice, bob)
    }

    @Test("merge-fields: disjoint edits both land, with no conflict")
    func mergeFieldsDisjoint() async throws {
        let (fixture, alice, bob) = try await setUp("notes")
        try await withCleanup({ await fixture.stop() }) {
            try alice.patch("notes", id: "r", ["title": "alice"])
            try bob.patch("notes", id: "r", ["count": 2])
            try await alice.sync()
            let summary = try await bob.sync()
            #expect(summary.conflicts == 0)
            try await alice.sync()
            for client in [alice, bob] {
                #expect(try client.record("notes", id: "r")?.data == ["title": "alice", "count": 2])
                #expect(try await client.verify("notes").matches)
            }
        }
    }

    @Test("merge-fields: the same field edited on both sides is a conflict resolved by the client's resolver, and recorded")
    func mergeFieldsSameField() async throws {
        let (fixture, alice, bob) = try await setUp("notes", resolver: .merge(fallback: .client))
        try await withCleanup({ await fixture.stop() }) {
            try alice.patch("notes", id: "r", ["title": "alice"])
            try bob.patch("notes", id: "r", ["title": "bob", "count": 5])
            try await alice.sync()
            let summary = try await bob.sync()
            #expect(summary.conflicts == 1)
            try await alice.sync()
            for client in [alice, bob] {
                #expect(try client.record("notes", id: "r")?.data == ["title": "bob", "count": 5])
            }
            let recorded = try #require(try bob.conflicts().first)
            #expect(recorded.conflict.base == ["title": "base", "count": 1])
            #expect(recorded.conflict.local == ["title": "bob", "count": 5])
            #expect(recorded.conflict.server == ["title": "alice", "count": 1])
            #expect(recorded.resolution == .merged)
        }
    }

    @Test("reject policy with server-wins drops the local change; with client-wins it is uploaded again")
    func rejectPolicy() async throws {
        let cases: [(ConflictResolver, [String: JSONValue])] = [(.serverWins, ["title": "alice", "rank": 1]), (.clientWins, ["title": "base", "rank": 9])]
        for (resolver, expected) in cases {
            let (fixture, alice, bob) = try await setUp("tasks", resolver: resolver)
            try alice.patch("tasks", id: "r", ["title": "alice"])
            try bob.patch("tasks", id: "r", ["rank": 9])
            try await alice.sync()
            #expect(try await bob.sync().conflicts == 1)
            try await alice.sync()
            for client in [alice, bob] {
                #expect(try client.record("tasks", id: "r")?.data == expected)
                #expect(try await client.verify("tasks").matches)
            }
            await fixture.stop()
        }
    }

    @Test("a custom resolver sees base, local and server, and its answer is applied everywhere")
    func customResolver() async throws {
        let (fixture, alice, bob) = try await setUp("tasks", resolver: .custom { conflict in
            let local = conflict.local?["rank"]?.integerValue ?? 0, server = conflict.server?["rank"]?.integerValue ?? 0
            return .data(["title": "resolved", "rank": .integer(local + server)])
        })
        try await withCleanup({ await fixture.stop() }) {
            try alice.patch("tasks", id: "r", ["rank": 10])
            try bob.patch("tasks", id: "r", ["rank": 20])
            try await alice.sync()
            try await bob.sync()
            try await alice.sync()
            #expect(try alice.record("tasks", id: "r")?.data == ["title": "resolved", "rank": 30])
            #expect(try bob.record("tasks", id: "r")?.data == ["title": "resolved", "rank": 30])
        }
    }

    @Test("last-writer-wins: the later upload wins without a conflict")
    func lastWriterWins() async throws {
        let (fixture, alice, bob) = try await setUp("logs")
        try await withCleanup({ await fixture.stop() }) {
            try alice.patch("logs", id: "r", ["message": "alice"])
            try bob.patch("logs", id: "r", ["message": "bob"])
            try await alice.sync()
            #expect(try await bob.sync().conflicts == 0)
            try await alice.sync()
            #expect(try alice.record("logs", id: "r")?.data == ["message": "bob"])
        }
    }

    @Test("a delete against an edit follows the fallback side")
    func deleteAgainstEdit() async throws {
        let (fixture, alice, bob) = try await setUp("notes", resolver: .merge(fallback: .server))
        try await withCleanup({ await fixture.stop() }) {
            try alice.delete("notes", id: "r")
            try bob.patch("notes", id: "r", ["title": "still here"])
            try await alice.sync()
            try await bob.sync()
            try await alice.sync()
            #expect(try alice.record("notes", id: "r") == nil)
            #expect(try bob.record("notes", id: "r") == nil)
            #expect(try await bob.verify("notes").matches)
        }
    }

    @Test("an edit made while an earlier upload of the same record is unacknowledged reaches the server")
    func editDuringUnacknowledgedUpload() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network) { $0.retry = RetryPolicy(maximumAttempts: 1) }
            try alice.create("tasks", id: "t", data: ["title": "first", "rank": 1])
            network.loseResponses(1, whenPathContains: "/batch")
            await #expect(throws: CairnError.self) { try await alice.push() }
            // The server applied the create, but alice never heard. She edits again.
            try alice.patch("tasks", id: "t", ["rank": 2])
            #expect(try alice.pendingOperations().count == 2)
            try await alice.sync()
            #expect(try alice.pendingOperations().isEmpty)
            let bob = try await fixture.client("bob")
            try await bob.sync()
            #expect(try bob.record("tasks", id: "t")?.data == ["title": "first", "rank": 2])
            #expect(try await fixture.pullAll("rita", "tasks").changes.first?.version == 2)
            #expect(try bob.conflicts().isEmpty && alice.conflicts().isEmpty)
        }
    }
}
