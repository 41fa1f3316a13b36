import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Failures, undo, identity, expiry and schema growth")
struct LifecycleTests {
    @Test("a write the server rejects is kept in the failed list while the rest syncs; edited, it is retried and lands")
    func failedThenRetried() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            // alice writes `priority` as a free-form field; meanwhile the server's schema declares it an integer.
            try alice.save("notes", id: "n1", data: ["title": "a", "priority": "high"])
            try alice.save("notes", id: "n2", data: ["title": "b"])
            var grown = Fixture.schema
            grown.collections[0].fields.append(FieldSchema(name: "priority", type: .integer))
            try await fixture.server.server.admin.setSchema(project: Fixture.project, grown)

            let summary = try await alice.sync()
            #expect(summary.failed == 1)
            #expect(summary.pushed == 1)
            let failed = try #require(try alice.failedOperations().first)
            #expect(failed.error.code == .validationFailed)
            #expect(failed.recordID == "n1")
            #expect(failed.data?["priority"] == "high")
            #expect(await alice.status().failedUploads == 1)
            // The local table learned the new column; the rejected change is still visible and marked pending.
            #expect(try alice.record("notes", id: "n1")?.hasPendingChanges == true)
            #expect(try alice.rows("SELECT priority FROM notes WHERE id = 'n2'") == [["priority": nil]])

            try alice.retryFailed(failed.id, data: ["title": "a", "priority": 1])
            #expect(try alice.failedOperations().isEmpty)
            try await alice.sync()
            #expect(try alice.record("notes", id: "n1")?.data == ["title": "a", "priority": 1])
            #expect(try alice.rows("SELECT priority FROM notes WHERE id = 'n1'") == [["priority": 1]])
            #expect(try await alice.verify("notes").matches)
        }
    }

    @Test("discarding a failed write shows the server's state again")
    func discardFailed() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.save("notes", id: "n1", data: ["title": "kept"])
            try await alice.sync()
            try alice.patch("notes", id: "n1", ["priority": "high"])
            var grown = Fixture.schema
            grown.collections[0].fields.append(FieldSchema(name: "priority", type: .integer))
            try await fixture.server.server.admin.setSchema(project: Fixture.project, grown)
            try await alice.sync()
            let failed = try #require(try alice.failedOperations().first)
            try alice.discardFailed(failed.id)
            #expect(try alice.record("notes", id: "n1")?.data == ["title": "kept"])
            #expect(try alice.record("notes", id: "n1")?.hasPendingChanges == false)
        }
    }

    @Test("undo drops pending changes back to the last server state; cancel drops one operation")
    func undoAndCancel() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.save("notes", id: "n1", data: ["title": "server"])
            try await alice.sync()
            try alice.patch("notes", id: "n1", ["title": "local"])
            try alice.create("notes", id: "n2", data: ["title": "new"])
            try alice.delete("notes", id: "n1")
            try alice.undoPendingChanges(in: "notes", ids: ["n1", "n2"])
            #expect(try alice.record("notes", id: "n1")?.data == ["title": "server"])
            #expect(try alice.record("notes", id: "n2") == nil)
            #expect(try alice.pendingOperations().isEmpty)

            try alice.patch("notes", id: "n1", ["title": "one"])
            try await alice.push()
            try alice.patch("notes", id: "n1", ["done": true])
            let queued = try #require(try alice.pendingOperations().first)
            try alice.cancel(opId: queued.opId)
            #expect(try alice.record("notes", id: "n1")?.data == ["title": "one"])
            #expect(try alice.pendingOperations().isEmpty)
        }
    }

    @Test("a store remembers its user: another user is refused, or switches after upload or discard")
    func userSwitch() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            do {
                let alice = try await fixture.client("alice", store: .file(path))
                try alice.create("notes", id: "from-alice", data: ["title": "pending"])
            }
            await #expect(throws: CairnError.self) { _ = try await fixture.client("bob", store: .file(path)) }
            do {
                _ = try await fixture.client("bob", store: .file(path))
            } catch let error as CairnError {
                #expect(error.code == .userMismatch)
            }
            let bob = try await fixture.client("bob", store: .file(path)) {
                $0.userChange = .uploadFirst(previous: .password(user: "alice", password: TestServer.password))
            }
            #expect(!bob.hasPendingUpload)
            #expect(try bob.record("notes", id: "from-alice") == nil)
            try await bob.sync()
            #expect(try bob.record("notes", id: "from-alice")?.updatedBy == "alice")
            try bob.create("notes", id: "from-bob", data: ["title": "dropped"])
            let rita = try await fixture.client("rita", store: .file(path)) { $0.userChange = .discard }
            #expect(!rita.hasPendingUpload)
            try await rita.sync()
            #expect(try rita.record("notes", id: "from-bob") == nil)
            #expect(try rita.record("notes", id: "from-alice") != nil)
        }
    }

    @Test("pending changes and failed counts survive closing and reopening the store")
    func durability() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let network = SwitchableTransport()
            do {
                let alice = try await fixture.client("alice", store: .file(path), network: network)
                network.isOnline = false
                try alice.create("notes", id: "n1", data: ["title": "offline"])
                try alice.patch("notes", id: "n1", ["done": true])
            }
            // Reopened offline: the schema and the queue are still there.
            let reopened = try await fixture.client("alice", store: .file(path), network: network)
            #expect(reopened.hasPendingUpload)
            #expect(await reopened.status().pendingUploads == 1)
            #expect(try reopened.record("notes", id: "n1")?.data == ["title": "offline", "done": true])
            network.isOnline = true
            try await reopened.sync()
            #expect(try await reopened.verify("notes").matches)
            #expect(!reopened.hasPendingDownload)
        }
    }

    @Test("sign-out wipes the store; clear deletes its files")
    func signOutAndClear() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let alice = try await fixture.client("alice", store: .file(path))
            try alice.create("notes", id: "n1", data: ["title": "x"])
            try await alice.signOut()
            #expect(throws: CairnError.self) { try alice.record("notes", id: "n1") }
            let again = try await fixture.client("bob", store: .file(path))
            #expect(try again.records(Query("notes")).isEmpty)
            // An interrupted rewrite's copy and its side-cars go too.
            for leftover in [".rekey", ".rekey-journal", ".rekey-wal", ".rekey-shm"] {
                #expect(FileManager.default.createFile(atPath: path + leftover, contents: Data()))
            }
            try await again.clear()
            #expect(!FileManager.default.fileExists(atPath: path))
            for suffix in ["-wal", "-shm", "-journal", ".rekey", ".rekey-journal", ".rekey-wal", ".rekey-shm"] {
                #expect(!FileManager.default.fileExists(atPath: path + suffix), "\(suffix) is left behind")
            }
        }
    }

    @Test("410 cursor_expired re-pulls a snapshot of that collection only, dropping vanished records and keeping pending changes")
    func cursorExpiry() async throws {
        let clock = ManualWallClock(Date())
        let fixture = try await Fixture.start(clock: clock) { $0.tombstoneRetention = 60; $0.accessTokenLifetime = 1_000_000 }
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let bob = try await fixture.client("bob")
            for id in ["a", "b", "c"] { try alice.create("notes", id: id, data: ["title": .string(id)]) }
            try alice.create("tasks", id: "t", data: ["title": "t"])
            try await alice.sync()
            try await bob.sync()
            try alice.delete("notes", id: "a")
            try alice.patch("notes", id: "b", ["title": "B"])
            try await alice.sync()
            clock.advance(by: 120)
            _ = try await fixture.server.server.purgeNow()
            try bob.patch("notes", id: "c", ["done": true])
            try await bob.sync()
            #expect(try bob.record("notes", id: "a") == nil)
            #expect(try bob.record("notes", id: "b")?.data["title"] == "B")
            #expect(try bob.record("notes", id: "c")?.data == ["title": "c", "done": true])
            #expect(try bob.record("tasks", id: "t") != nil)
            #expect(try await bob.verify("notes").matches)
        }
    }

    @Test("download groups, phases and filters pull the chosen collections and records")
    func groupsPhasesFilters() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.create("notes", id: "open", data: ["title": "o", "done": false])
            try alice.create("notes", id: "closed", data: ["title": "c", "done": true])
            try alice.create("tasks", id: "t", data: ["title": "t"])
            try alice.create("logs", id: "l", data: ["message": "m"])
            try await alice.sync()
            let bob = try await fixture.client("bob") {
                $0.downloadGroups = ["work": ["tasks", "logs"]]
                $0.downloadPhases = [["logs"], ["notes"]]
                $0.downloadFilters = ["notes": .condition("done", .eq, false)]
            }
            var events = await bob.events().makeAsyncIterator()
            try await bob.pull(group: "work")
            #expect(try bob.record("tasks", id: "t") != nil)
            #expect(try bob.records(Query("notes")).isEmpty)
            #expect(try bob.isFirstPullComplete("logs"))
            #expect(try !bob.isFirstPullComplete("notes"))
            var completed: [String] = []
            while let event = await events.next() {
                if case .firstPullCompleted(let name) = event { completed.append(name) }
                if case .completed = event { break }
            }
            // Phase order: logs is in the first download phase, tasks in none.
            #expect(completed == ["logs", "tasks"])
            try await bob.pull()
            #expect(try bob.records(Query("notes")).map(\.id) == ["open"])
            let status = await bob.status()
            #expect(status.collections["notes"]?.firstPullCompleted == true)
            #expect(status.lastDownload != nil)
            await #expect(throws: CairnError.self) { try await bob.pull(group: "nope") }
        }
    }
}
