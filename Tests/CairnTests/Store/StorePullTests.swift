import CairnProtocol
import GRDB
import Testing

@testable import Cairn

@Suite("Store: pull application")
struct StorePullTests {
    @Test("a page and its cursor commit together; the last page ends the first pull")
    func pageAndCursor() throws {
        let test = try TestStore()
        #expect(try test.store.pullStates.state("notes").needsPull)
        try test.store.pullStates.markPulling("notes")
        let first = try test.pull([.init(id: "n-1", version: 1, data: ["title": "A", "tags": ["x"]])], cursor: "c1", hasMore: true)
        #expect(first.changes == 1)
        var state = try test.store.pullStates.state("notes")
        #expect(state.cursor == "c1")
        #expect(try test.pulling("notes"))
        #expect(!state.firstPullDone)
        #expect(try test.store.pullStates.hasPendingDownload())

        try test.pull([.init(id: "n-2", version: 2, data: ["title": "B"])], cursor: "c2", hasMore: false)
        state = try test.store.pullStates.state("notes")
        #expect(state.cursor == "c2")
        #expect(try !test.pulling("notes"))
        #expect(state.firstPullDone)
        #expect(!state.needsPull)
        let record = try #require(try test.record("n-1"))
        #expect(record.data == ["title": "A", "tags": ["x"]])
        #expect(record.version == 1)
        #expect(!record.hasPendingChanges)
        #expect(try test.store.rows(sql: "SELECT json_extract(tags, '$[0]') AS tag FROM notes WHERE id = 'n-1'", arguments: []) == [["tag": "x"]])
    }

    @Test("a page that fails half-way leaves neither its records nor its cursor")
    func failedPageLeavesNothing() throws {
        let test = try TestStore()
        try test.store.writer.write { db in
            try db.execute(sql: "CREATE TRIGGER poison BEFORE INSERT ON notes WHEN new.id = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END")
        }
        #expect(throws: (any Error).self) {
            try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"]), .init(id: "poison", version: 2, data: [:])], cursor: "c9")
        }
        #expect(try test.count("notes") == 0)
        #expect(try test.store.pullStates.state("notes").cursor == nil)
    }

    @Test("a pulled change of a record with a local change moves its server state, and the local change stays shown")
    func pendingChangeKept() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"])])
        try test.store.write(collection: "notes", id: "n-1", change: .patch(["count": 3]))
        try test.pull([.init(id: "n-1", version: 2, data: ["title": "B"])], cursor: "c2")

        let record = try #require(try test.record("n-1"))
        #expect(record.data == ["title": "A", "count": 3])
        #expect(record.hasPendingChanges)
        let shadow = try #require(try test.shadow("n-1"))
        #expect(shadow.baseVersion == 1)
        #expect(shadow.serverVersion == 2)
        #expect(shadow.serverData == ["title": "B"])
        // The digest counts the server state this replica holds, not the local one.
        #expect(try test.store.serverPairs("notes").map { "\($0.0)@\($0.1)" } == ["n-1@2"])
        // An older state pulled late does not move it back.
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"])], cursor: "c3")
        #expect(try test.shadow("n-1")?.serverVersion == 2)

        // Undoing the local change shows the newest server state.
        try test.store.uploads.undoChanges(collection: "notes", ids: ["n-1"])
        let undone = try #require(try test.record("n-1"))
        #expect(undone.data == ["title": "B"])
        #expect(undone.version == 2)
        #expect(!undone.hasPendingChanges)
    }

    @Test("tombstones delete synced rows, and only move the server state of records with local changes")
    func tombstones() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"]), .init(id: "n-2", version: 1, data: ["title": "B"])])
        try test.store.write(collection: "notes", id: "n-2", change: .patch(["count": 1]))
        try test.pull([.init(id: "n-1", version: 2, data: nil), .init(id: "n-2", version: 2, data: nil)], cursor: "c2")
        #expect(try test.record("n-1") == nil)
        #expect(try test.record("n-2")?.data == ["title": "B", "count": 1])
        let shadow = try #require(try test.shadow("n-2"))
        #expect(shadow.serverVersion == 2)
        #expect(shadow.serverData == nil)
        #expect(try test.store.serverPairs("notes").isEmpty)
    }

    @Test("an older pulled version never replaces a newer row")
    func olderVersionIgnored() throws {
        let test = try TestStore()
        try test.pull([.init(id: "n-1", version: 5, data: ["title": "new"])])
        try test.pull([.init(id: "n-1", version: 3, data: ["title": "old"])], cursor: "c2")
        #expect(try test.record("n-1")?.data == ["title": "new"])
        #expect(try test.record("n-1")?.version == 5)
    }

    @Test("a fresh snapshot drops the synced records it did not list and keeps those with local changes")
    func resync() throws {
        let test = try TestStore()
        try test.pull([
            .init(id: "n-1", version: 1, data: ["title": "A"]), .init(id: "n-2", version: 1, data: ["title": "B"]),
            .init(id: "n-3", version: 1, data: ["title": "C"]),
        ])
        try test.store.write(collection: "notes", id: "n-3", change: .patch(["count": 1]))
        try test.store.pullStates.beginResync("notes")
        #expect(try test.store.pullStates.state("notes").resyncing)
        #expect(try test.store.pullStates.state("notes").cursor == nil)
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"])], cursor: "s1", hasMore: true)
        #expect(try test.record("n-2") != nil)
        try test.pull([], cursor: "s2", hasMore: false)

        #expect(try test.record("n-1") != nil)
        #expect(try test.record("n-2") == nil)
        #expect(try test.record("n-3")?.data == ["title": "C", "count": 1])
        #expect(try test.shadow("n-3")?.serverData == nil)
        #expect(try !test.store.pullStates.state("notes").resyncing)
        #expect(try test.count("cairn_resync") == 0)
    }
}

@Suite("Store: schema growth")
struct StoreSchemaGrowthTests {
    @Test("a new field's column is filled from the records already stored, with no new download, and the collection is reported")
    func newFieldFilledInPlace() throws {
        let test = try TestStore()
        try test.pull([
            .init(id: "n-1", version: 1, data: ["title": "A", "priority": 3]), .init(id: "n-2", version: 2, data: ["title": "B"]),
        ], cursor: "c7")
        var grown = TestStore.schema
        grown.collections[0].fields.append(FieldSchema(name: "priority", type: .integer))
        let changed = try test.store.apply(schema: grown, etag: "\"v2\"")
        #expect(changed == ["notes"])
        #expect(try test.store.records(Query("notes").filter(.condition("priority", .eq, 3))).map(\.id) == ["n-1"])
        #expect(try test.store.rows(sql: "SELECT id, priority FROM notes ORDER BY id", arguments: []) == [
            ["id": "n-1", "priority": 3], ["id": "n-2", "priority": .null],
        ])
        // The cursor is kept: nothing is downloaded again.
        #expect(try test.store.pullStates.state("notes").cursor == "c7")
        #expect(try test.store.apply(schema: grown, etag: "\"v2\"") == [])
    }
}
