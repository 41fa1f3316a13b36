import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Offline store: local-only collections, online reads, schema growth")
struct OfflineStoreFeatureTests {
    static let drafts = CollectionSchema(name: "drafts", fields: [FieldSchema(name: "text", type: .string), FieldSchema(name: "words", type: .integer)])

    @Test("a local-only collection is queried like the others, survives a reopen and is never uploaded")
    func localOnly() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let configure: (inout CairnConfiguration) -> Void = {
                $0.localCollections = [Self.drafts]
                $0.localIndexes = ["drafts": [["words"]]]
                $0.fullTextSearch = ["drafts": ["text"]]
            }
            var alice = try await fixture.client("alice", store: .file(path), configure: configure)
            try alice.create("drafts", id: "d-1", data: ["text": "fire exit blocked", "words": 3])
            try alice.save("drafts", id: "d-2", data: ["text": "two words", "words": 2])
            try alice.patch("drafts", id: "d-2", ["words": 20])
            try alice.create("drafts", id: "d-3", data: ["text": "gone soon"])
            try alice.delete("drafts", id: "d-3")
            expectError(.validationFailed) { try alice.create("drafts", id: "d-4", data: ["words": "many"]) }
            try alice.create("notes", id: "n-1", data: ["title": "synced"])
            #expect(try alice.pendingOperations().map(\.collection) == ["notes"])
            #expect(try alice.records(Query("drafts").filter(.condition("words", .gt, 2))).map(\.id) == ["d-1", "d-2"])
            #expect(try alice.records(Query("drafts").matching("exit")).map(\.id) == ["d-1"])
            #expect(try alice.record("drafts", id: "d-1")?.hasPendingChanges == false)
            try await alice.sync()
            #expect(try alice.pendingOperations().isEmpty)
            let onServer = await #expect(throws: (any Error).self) { _ = try await fixture.pullAll("alice", "drafts") }
            #expect(onServer != nil, "the server has no drafts collection")
            await #expect(throws: CairnError.self) { _ = try await alice.fetchFromServer("drafts", id: "d-1") }

            alice = try await fixture.client("alice", store: .file(path), configure: configure)
            #expect(try alice.count(Query("drafts")) == 2)
            #expect(try alice.records(Query("drafts").matching("exit")).map(\.id) == ["d-1"])
            // A name the server uses cannot be local-only.
            await #expect(throws: CairnError.self) {
                _ = try await fixture.client("bob", store: .file(path)) { $0.localCollections = [CollectionSchema(name: "notes", fields: [])] }
            }
        }
    }

    @Test("fetchFromServer reads one record now and updates the local copy, unless it has local changes")
    func onlineRead() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n-1", op: .create, data: ["title": "v1"])])
            let bob = try await fixture.client("bob")
            #expect(try bob.record("notes", id: "n-1") == nil)
            let fetched = try await bob.fetchFromServer("notes", id: "n-1")
            #expect(fetched?.data["title"] == "v1")
            #expect(try bob.record("notes", id: "n-1")?.data["title"] == "v1")
            #expect(try await bob.fetchFromServer("notes", id: "missing") == nil)

            // With a local change pending, the local copy keeps it.
            try bob.patch("notes", id: "n-1", ["done": true])
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n-1", op: .patch, data: ["title": "v2"])])
            #expect(try await bob.fetchFromServer("notes", id: "n-1")?.data["title"] == "v2")
            #expect(try bob.record("notes", id: "n-1")?.data == ["title": "v1", "done": true])
            try await bob.sync()
            #expect(try bob.record("notes", id: "n-1")?.data == ["title": "v2", "done": true])

            // A record deleted on the server leaves a copy without local changes.
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n-1", op: .delete)])
            #expect(try await bob.fetchFromServer("notes", id: "n-1") == nil)
            #expect(try bob.record("notes", id: "n-1") == nil)
        }
    }

    @Test("observe and observeCount follow a full-text query, and a client's JSON cache is its server's and project's")
    func observeSearchAndClientCache() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice") { $0.fullTextSearch = ["notes": ["title"]] }
            try alice.create("notes", id: "n-1", data: ["title": "fire exit"])
            var records = alice.observe(Query("notes").matching("fire")).makeAsyncIterator()
            var counts = alice.observeCount(Query("notes").matching("fire")).makeAsyncIterator()
            #expect(try await records.next()?.map(\.id) == ["n-1"])
            #expect(try await counts.next() == 1)
            try alice.create("notes", id: "n-2", data: ["title": "Fire drill"])
            #expect(try await records.next()?.map(\.id).sorted() == ["n-1", "n-2"])
            #expect(try await counts.next() == 2)
            try alice.patch("notes", id: "n-1", ["title": "exit"])
            #expect(try await records.next()?.map(\.id) == ["n-2"])

            let cache = try alice.jsonCache(name: "products", fields: [.string("sku")])
            try cache.cache([["id": "p-1", "sku": "A"]])
            #expect(cache.scope.hasSuffix("#\(Fixture.project)"))
            #expect(cache.scope.hasPrefix(fixture.server.baseURL.absoluteString))
            #expect(try alice.jsonCache(name: "products", fields: [.string("sku")]).count() == 1)
        }
    }
}
