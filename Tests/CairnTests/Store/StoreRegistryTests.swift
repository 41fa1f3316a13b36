import CairnProtocol
import Foundation
import GRDB
import Testing

@testable import Cairn

@Suite("Store: the table registry")
struct StoreRegistryTests {
    /// Every table of the database but SQLite's and the migrator's own.
    static func tables(_ store: LocalStore) throws -> Set<String> {
        try store.writer.read { db in
            Set(try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'grdb_migrations'
                """))
        }
    }

    @Test("every table of the database is owned by exactly one registered table part")
    func everyTableRegistered() throws {
        let test = try TestStore()
        let owned = test.store.registry.flatMap(\.tableNames)
        #expect(owned.count == Set(owned).count)
        #expect(Set(owned) == (try Self.tables(test.store)))
        #expect(Set(owned).isSuperset(of: ["notes", "tasks", "cairn_queue", "cairn_attempts", "cairn_shadow", "cairn_collections"]))
    }

    @Test("wiping walks the registry: no rows are left in any table, the collection tables go, and the store works again")
    func wipeLeavesNothing() throws {
        let test = try TestStore()
        let store = test.store
        // Put rows in every table.
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"]), .init(id: "n-2", version: 1, data: ["title": "B"])])
        try store.pullStates.beginResync("notes")
        try test.pull([.init(id: "n-1", version: 1, data: ["title": "A"])], cursor: "s1", hasMore: true)
        try store.write(collection: "notes", id: "n-1", change: .patch(["count": 1]))
        try store.write(collection: "notes", id: "n-2", change: .patch(["count": 2]))
        try store.write(collection: "tasks", id: "t-1", change: .create(["done": false]))
        let conflicts = try test.push { operation in
            switch operation.recordID {
            case "n-1": return TestStore.rejected(operation)
            case "n-2": return TestStore.conflict(operation, current: ServerRecord(id: "n-2", version: 3, data: ["title": "C"]))
            default: return TestStore.applied(operation, version: 1)
            }
        }
        try store.write(collection: "tasks", id: "t-1", change: .patch(["done": true]))
        _ = try store.uploads.takeBatch(limit: 10)
        for (operation, current) in conflicts {
            try store.uploads.resolve(try store.uploads.conflict(for: operation, current: current), resolution: .client, current: current)
        }
        try store.setClientID("client-1")
        try store.rememberIdentity(user: "alice", server: "http://localhost", project: "p", device: "d")
        let history = try store.history.begin(kind: .sync)
        try store.history.end(history, summary: SyncSummary(), error: nil)
        try store.files.queueFileUpload(FileUploadJob(
            localID: "local-1", name: "a.jpg", contentType: "image/jpeg", size: 1, sha256: "", tags: [], isPublic: false, attachTo: nil,
            path: "uploads/local-1", createdAt: Date()))
        try store.files.cacheFile("f-1", path: "cache/f-1", size: 1, pinned: false)
        _ = try store.files.queueFileDeletion("f-2", detachFrom: nil)
        try store.indexes.addIndex(.init(collection: "notes", kind: .fullText, fields: ["title"]))
        let cache = try JSONCache(writer: store.writer, scope: "s", name: "c", fields: [.string("a")])
        try cache.cache([["id": "e-1", "a": "x"]])
        let queries = DownloadQueryStore(store: store)
        try queries.create(name: "q", collection: "tasks", filter: .condition("done", .eq, false))
        let page = try store.scan(Data(#"{"changes":[{"id":"t-2","version":4,"data":{"done":false}}],"cursor":"q1","hasMore":false}"#.utf8), collection: "tasks")
        _ = try store.apply(page, to: .query(name: "q", collection: "tasks", phase: .main(snapshot: false)))
        let holder = SyncLeaseTable.Holder(id: "1-2", pid: 1, host: "h", standing: false, expiresAt: Date())
        _ = try store.writer.write { db in try store.syncLease.take(db, holder, now: Date(), isRunning: { _ in false }) }
        _ = try store.actions.enqueue(action: "closeJob", arguments: ["jobId": "j-1"])
        try store.writer.write { db in
            try store.actionResults.save(db, ActionResult(key: "k-0", action: "closeJob", arguments: .null, result: ["ok": true], error: nil, completedAt: Date()))
        }
        _ = try store.writer.write { db in try store.heldGroups.hold(db, "drafts", at: Date()) }
        let tables = try Self.tables(store)
        for table in tables { #expect(try test.count(table) > 0, "\(table) holds rows before the wipe") }

        try store.wipe()
        let left = try Self.tables(store)
        #expect(left == tables.subtracting(["notes", "tasks", "cairn_cache_1"]).filter { !$0.hasPrefix("cairn_fts_") })
        for table in left { #expect(try test.count(table) == 0, "\(table) is empty after the wipe") }
        #expect(store.schema == nil)
        #expect(store.clientID == nil)
        #expect(try store.meta(.user) == nil)
        expectError(.schemaUnavailable) { try store.write(collection: "notes", id: "n-1", change: .save([:])) }

        // A new schema makes the store usable again.
        try store.apply(schema: TestStore.schema, etag: nil)
        try store.write(collection: "notes", id: "n-1", change: .save(["title": "again"]))
        #expect(try store.uploads.pendingOperations().map(\.kind) == [.create])
    }

    @Test("the store opens on an injected writer, keeps its schema and client id, and reads them once")
    func reopensFromWriter() throws {
        let database = try DatabaseQueue()
        let first = try LocalStore(writer: database)
        try first.apply(schema: TestStore.schema, etag: "\"e\"")
        try first.setClientID("client-7")
        let second = try LocalStore(writer: database)
        #expect(second.schema == TestStore.schema)
        #expect(second.clientID == "client-7")
        #expect(try second.meta(.schemaETag) == "\"e\"")
        #expect(try second.tableName("notes") == "notes")
        // The client id is served from memory: removing it under the store does not change what requests send.
        try database.write { db in try db.execute(sql: "DELETE FROM cairn_meta WHERE key = 'client_id'") }
        #expect(second.clientID == "client-7")
    }
}
