import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Local changes that wait while pulls move on")
struct PendingDuringPullTests {
    @Test("a pull moves the server base under a pending change: the local state stays as the app left it, then uploads and merges")
    func pullUnderPendingChange() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let bob = try await fixture.client("bob")
            try alice.create("notes", id: "r", data: ["title": "base", "count": 1])
            try await alice.sync()
            try await bob.sync()
            try bob.patch("notes", id: "r", ["title": "bob"])
            try alice.patch("notes", id: "r", ["count": 2])
            try await alice.sync()

            let pulled = try await bob.pull()
            #expect(pulled.pulled >= 1)
            // The row shows bob's local state until his change is acknowledged; the pulled state became its base.
            let shown = try #require(try bob.record("notes", id: "r"))
            #expect(shown.data == ["title": "bob", "count": 1])
            #expect(shown.hasPendingChanges)
            #expect(try bob.pendingOperations().map(\.kind) == [.patch])

            #expect(try await bob.push().conflicts == 0)
            try await alice.sync()
            for client in [alice, bob] {
                #expect(try client.record("notes", id: "r")?.data == ["title": "bob", "count": 2])
                #expect(try await client.verify("notes").matches)
            }
        }
    }

    @Test("an expired cursor re-pulls that collection as a snapshot and keeps the changes still waiting to upload")
    func expiredCursorKeepsPending() async throws {
        let clock = ManualWallClock(Date())
        let fixture = try await Fixture.start(clock: clock) { $0.tombstoneRetention = 60; $0.accessTokenLifetime = 1_000_000 }
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let bob = try await fixture.client("bob")
            for id in ["a", "b", "c"] { try alice.create("notes", id: id, data: ["title": .string(id)]) }
            try await alice.sync()
            try await bob.sync()
            try alice.delete("notes", id: "a")
            try await alice.sync()
            clock.advance(by: 120)
            _ = try await fixture.server.server.purgeNow()
            try bob.patch("notes", id: "c", ["done": true])
            try bob.create("notes", id: "d", data: ["title": "new on bob"])

            try await bob.pull(["notes"])
            #expect(try bob.record("notes", id: "a") == nil)
            #expect(try bob.record("notes", id: "c")?.data == ["title": "c", "done": true])
            #expect(try bob.record("notes", id: "d")?.hasPendingChanges == true)
            #expect(Set(try bob.pendingOperations().map(\.recordID)) == ["c", "d"])

            try await bob.push()
            try await alice.sync()
            #expect(try alice.record("notes", id: "c")?.data == ["title": "c", "done": true])
            #expect(try alice.record("notes", id: "d")?.data == ["title": "new on bob"])
            #expect(try await bob.verify("notes").matches)
        }
    }

    @Test("a collection's own resolver overrides the default one")
    func perCollectionResolver() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let bob = try await fixture.client("bob") {
                $0.conflictResolver = .serverWins
                $0.collectionResolvers = ["tasks": .clientWins]
            }
            try alice.create("tasks", id: "t", data: ["title": "base", "rank": 1])
            try alice.create("notes", id: "n", data: ["title": "base"])
            try await alice.sync()
            try await bob.sync()
            // Both collections answer a stale write with a conflict: tasks by its reject policy, notes because the
            // same field changed on both sides.
            try alice.patch("tasks", id: "t", ["rank": 2])
            try alice.patch("notes", id: "n", ["title": "alice"])
            try await alice.sync()
            try bob.patch("tasks", id: "t", ["rank": 9])
            try bob.patch("notes", id: "n", ["title": "bob"])
            #expect(try await bob.sync().conflicts == 2)
            try await alice.sync()
            for client in [alice, bob] {
                #expect(try client.record("tasks", id: "t")?.data == ["title": "base", "rank": 9])
                #expect(try client.record("notes", id: "n")?.data == ["title": "alice"])
            }
        }
    }

    @Test("a store registers once: its client id survives reopening, and another store gets its own")
    func clientRegistration() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let first = try #require(try await fixture.client("alice", store: .file(path)).clientID)
            let again = try await fixture.client("alice", store: .file(path)).clientID
            let other = try await fixture.client("alice").clientID
            #expect(first == again)
            #expect(other != nil && other != first)
        }
    }

    @Test("a full pull goes phase by phase, then through the remaining collections in schema order")
    func phasesOrderAFullPull() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let bob = try await fixture.client("bob") { $0.downloadPhases = [["logs"], ["notes"]] }
            var events = await bob.events().makeAsyncIterator()
            try await bob.pull()
            var completed: [String] = []
            while let event = await events.next() {
                if case .firstPullCompleted(let name) = event { completed.append(name) }
                if case .completed = event { break }
            }
            let rest = Fixture.schema.collections.map(\.name).filter { $0 != "logs" && $0 != "notes" }
            #expect(completed == ["logs", "notes"] + rest)
        }
    }
}
