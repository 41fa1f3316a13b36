import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("The changes feed")
struct ChangesFeedTests {
    func create(_ id: String, _ data: [String: JSONValue], in collection: String = "notes") -> SyncOperation {
        SyncOperation(opId: newOpID(), collection: collection, id: id, op: .create, data: data)
    }

    @Test("a snapshot pages through live records, then deltas carry updates and tombstones once per id")
    func snapshotThenDelta() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", (1...25).map { create("n\($0)", ["title": .string("note \($0)")]) })
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n3", op: .delete)])
            _ = try await fixture.push("alice", [create("t1", ["title": "task"], in: "tasks")])

            let first = try await fixture.pull("alice", "notes", limit: 10).decode(ChangesPage.self)
            #expect(first.changes.count == 10)
            #expect(first.hasMore)
            #expect(first.schemaVersion == SchemaVersioning.stamped(Fixture.schema).version)
            let snapshot = try await fixture.pullAll("alice", "notes", limit: 10)
            #expect(snapshot.changes.count == 24)
            #expect(!snapshot.changes.contains { $0.deleted })
            #expect(snapshot.changes.map(\.version) == snapshot.changes.map(\.version).sorted())
            #expect(Set(snapshot.changes.map(\.id)).count == 24)

            // Nothing new: an empty page, same position.
            let idle = try await fixture.pull("alice", "notes", since: snapshot.cursor).decode(ChangesPage.self)
            #expect(idle.changes.isEmpty)
            #expect(!idle.hasMore)

            // n1 changes twice and n2 is deleted: the delta has one entry per id, its latest state, in version order.
            _ = try await fixture.push("bob", [SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .patch, data: ["done": true])])
            _ = try await fixture.push("bob", [SyncOperation(opId: newOpID(), collection: "notes", id: "n2", op: .delete)])
            _ = try await fixture.push("bob", [SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .patch, data: ["done": false])])
            let delta = try await fixture.pullAll("alice", "notes", since: snapshot.cursor)
            #expect(delta.changes.map(\.id) == ["n2", "n1"])
            #expect(delta.changes[0].deleted)
            #expect(delta.changes[0].data == nil)
            #expect(delta.changes[1].data?["done"] == false)
            #expect(delta.changes[1].updatedBy == "bob")
        }
    }

    @Test("a snapshot's first page says how many records it holds (with the where filter), later pages and deltas do not")
    func snapshotTotal() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", (1...25).map { create("n\($0)", ["count": .integer(Int64($0))]) })
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n3", op: .delete)])
            let first = try await fixture.pull("alice", "notes", limit: 10).decode(ChangesPage.self)
            #expect(first.total == 24)
            let second = try await fixture.pull("alice", "notes", since: first.cursor, limit: 10).decode(ChangesPage.self)
            #expect(second.total == nil)
            let filtered = try await fixture.pull("alice", "notes", limit: 5, filter: .condition("count", .gt, 20)).decode(ChangesPage.self)
            #expect(filtered.total == 5)
            let whole = try await fixture.pull("alice", "notes", limit: 100).decode(ChangesPage.self)
            #expect(whole.total == 24 && !whole.hasMore)
            let delta = try await fixture.pull("alice", "notes", since: whole.cursor).decode(ChangesPage.self)
            #expect(delta.total == nil)
        }
    }

    @Test("a snapshot stays exact while writers change records under it")
    func snapshotUnderWrites() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", (1...20).map { create("n\($0)", ["count": .integer(Int64($0))]) })
            let page1 = try await fixture.pull("alice", "notes", limit: 5).decode(ChangesPage.self)
            // Delete one already sent, delete one not yet sent, update one not yet sent, add a new one.
            _ = try await fixture.push("bob", [
                SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .delete),
                SyncOperation(opId: newOpID(), collection: "notes", id: "n10", op: .delete),
                SyncOperation(opId: newOpID(), collection: "notes", id: "n12", op: .patch, data: ["count": 120]),
                create("n21", ["count": 21]),
            ])
            let rest = try await fixture.pullAll("alice", "notes", since: page1.cursor, limit: 5)
            var replica: [String: Change] = [:]
            for change in page1.changes + rest.changes {
                if change.deleted { replica[change.id] = nil } else { replica[change.id] = change }
            }
            let expected = Set((2...21).map { "n\($0)" }).subtracting(["n10"])
            #expect(Set(replica.keys) == expected)
            #expect(replica["n12"]?.data?["count"] == 120)
        }
    }

    @Test("where filters select records, and changed records that leave the filter come back as gone")
    func filteredPull() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", [
                create("a", ["title": "Buy milk", "done": false]), create("b", ["title": "Walk", "done": false]),
                create("c", ["title": "Milkshake", "done": true]),
            ])
            let open: Filter = .condition("done", .eq, false)
            let snapshot = try await fixture.pullAll("alice", "notes", filter: open)
            #expect(snapshot.changes.map(\.id) == ["a", "b"])
            _ = try await fixture.push("bob", [
                SyncOperation(opId: newOpID(), collection: "notes", id: "a", op: .patch, data: ["done": true]),
                SyncOperation(opId: newOpID(), collection: "notes", id: "b", op: .delete),
                SyncOperation(opId: newOpID(), collection: "notes", id: "c", op: .patch, data: ["done": false]),
            ])
            let delta = try await fixture.pullAll("alice", "notes", since: snapshot.cursor, filter: open)
            #expect(delta.changes.map(\.id) == ["a", "b", "c"])
            #expect(delta.changes[0].gone && delta.changes[0].data == nil)
            #expect(delta.changes[1].deleted)
            #expect(delta.changes[2].data?["title"] == "Milkshake")
        }
    }

    @Test("a where filter may name a path inside a json field; a path from a non-json field is 422 naming it")
    func pathFilters() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", [
                create("a", ["title": "A", "tags": ["site": ["city": "Lyon", "floor": 2]]]),
                create("b", ["title": "B", "tags": ["site": ["city": "Brest", "floor": 5]]]),
                create("c", ["title": "C", "tags": ["red"]]),
            ])
            let lyon = try await fixture.pullAll("alice", "notes", filter: .condition("tags.site.city", .eq, "Lyon"))
            #expect(lyon.changes.map(\.id) == ["a"])
            let high = try await fixture.pullAll("alice", "notes", filter: .not(.condition("tags.site.floor", .gt, 3)))
            #expect(high.changes.map(\.id) == ["a", "c"])
            let response = try await fixture.pull("alice", "notes", filter: .condition("title.city", .eq, "Lyon"))
            #expect(response.status == 422)
            #expect(try response.decode(ErrorEnvelope.self).error.details?["field"] == .string("title.city"))
        }
    }

    @Test("cursors older than the tombstone horizon answer 410 cursor_expired")
    func cursorExpiry() async throws {
        let clock = ManualWallClock()
        let fixture = try await Fixture.start(clock: clock) { $0.tombstoneRetention = 3600; $0.accessTokenLifetime = 100_000 }
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", [create("a", ["title": "a"]), create("b", ["title": "b"])])
            let old = try await fixture.pullAll("alice", "notes").cursor
            let oldTasks = try await fixture.pullAll("alice", "tasks").cursor
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "a", op: .delete)])
            let recent = try await fixture.pullAll("alice", "notes", since: old).cursor
            clock.advance(by: 1800)
            #expect(try await fixture.server.server.purgeNow().tombstones == 0)
            #expect(try await fixture.pull("alice", "notes", since: old).status == 200)
            clock.advance(by: 1801)
            #expect(try await fixture.server.server.purgeNow().tombstones == 1)
            let expired = try await fixture.pull("alice", "notes", since: old)
            #expect(expired.status == 410)
            #expect(expired.errorCode == "cursor_expired")
            // A cursor past the purged tombstone still works, and a fresh snapshot always does.
            #expect(try await fixture.pull("alice", "notes", since: recent).status == 200)
            #expect(try await fixture.pullAll("alice", "notes").changes.map(\.id) == ["b"])
            // Other collections' cursors, as old, are not affected.
            #expect(try await fixture.pull("alice", "tasks", since: oldTasks).status == 200)
        }
    }

    static let malformedQueries: [(String, String)] = [
        ("since=garbage", "since"), ("since=ZDEuLTE", "since"), ("limit=0", "limit"), ("limit=10001", "limit"), ("limit=ten", "limit"),
        ("where=%7Bnot%20json", "where"), ("where=%7B%22field%22%3A%22nope%22%2C%22op%22%3A%22eq%22%2C%22value%22%3A1%7D", "nope"),
        ("where=%7B%22field%22%3A%22count%22%2C%22op%22%3A%22eq%22%2C%22value%22%3A%22one%22%7D", "count"),
        ("where=%7B%22field%22%3A%22count%22%2C%22op%22%3A%22like%22%2C%22value%22%3A%221%25%22%7D", "count"),
        ("where=%7B%22field%22%3A%22done%22%2C%22op%22%3A%22lt%22%2C%22value%22%3Atrue%7D", "done"),
        ("where=%7B%22field%22%3A%22title%22%2C%22op%22%3A%22between%22%2C%22value%22%3A1%7D", "where"),
    ]

    @Test("bad cursors, limits and filters are 422 validation_failed", arguments: malformedQueries)
    func badQueries(query: String, field: String) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let reply = try await fixture.http.send(.GET, "/v1/projects/field/collections/notes/changes?\(query)", token: fixture.tokens["rita"])
            #expect(reply.status == 422)
            #expect(reply.errorCode == "validation_failed")
            #expect(reply.json?["error"]?["details"]?["field"] == .string(field))
        }
    }

    @Test("unknown collections are 404")
    func unknownCollection() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let reply = try await fixture.pull("alice", "nosuch")
            #expect(reply.status == 404)
            #expect(reply.errorCode == "not_found")
        }
    }
}
