import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// App builds made for different schema numbers syncing the same records across a rename and a type change.
@Suite("Schema evolution with app builds in the field")
struct SchemaEvolutionClientTests {
    /// Schema 2: the fixture's collections and `jobs` (merge-fields).
    static var base: Schema {
        var schema = Fixture.schema
        schema.collections.append(CollectionSchema(
            name: "jobs",
            fields: [FieldSchema(name: "title", type: .string), FieldSchema(name: "score", type: .integer), FieldSchema(name: "count", type: .integer)],
            conflictPolicy: .mergeFields))
        return schema
    }

    /// Schema 3: `score` renamed `rating`, `count` an integer become a number.
    static var renamed: Schema {
        var schema = base
        schema.collections[3].fields = [
            FieldSchema(name: "title", type: .string), FieldSchema(name: "rating", type: .integer), FieldSchema(name: "count", type: .number),
        ]
        schema.migrations = [
            SchemaMigration(collection: "jobs", step: .rename(from: "score", to: "rating")),
            SchemaMigration(collection: "jobs", step: .convert(field: "count", to: .number, format: nil)),
        ]
        return schema
    }

    static func seeded() async throws -> Fixture {
        let fixture = try await Fixture.start()
        try await fixture.server.server.admin.setSchema(project: "field", base)
        _ = try await fixture.push("ada", [
            SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .create, data: ["title": "Fix roof", "score": 5, "count": 2]),
            SyncOperation(opId: newOpID(), collection: "jobs", id: "j2", op: .create, data: ["title": "Paint", "score": 7, "count": 1]),
        ])
        return fixture
    }

    @Test("an old build and an updated build, both offline with queued changes when the schema changes, converge with nothing lost")
    func converge() async throws {
        let fixture = try await Self.seeded()
        try await withCleanup({ await fixture.stop() }) {
            let oldNetwork = SwitchableTransport(), newNetwork = SwitchableTransport()
            let old = try await fixture.client("alice", network: oldNetwork) { $0.schemaVersion = 2 }
            let path = Fixture.temporaryStorePath()
            let updating = try await fixture.client("bob", store: .file(path), network: newNetwork) { $0.schemaVersion = 2 }
            try await old.sync()
            try await updating.sync()

            oldNetwork.isOnline = false
            newNetwork.isOnline = false
            try old.patch("jobs", id: "j1", ["score": 6])
            try old.patch("jobs", id: "j2", ["title": "Paint twice"])
            try updating.patch("jobs", id: "j1", ["count": 3])
            try updating.patch("jobs", id: "j2", ["score": 8])
            try old.save("jobs", id: "j3", data: ["title": "Mow", "score": 1, "count": 4])

            try await fixture.server.server.admin.setSchema(project: "field", Self.renamed)

            // The app updates on one device: the store reopens with the new number, its queue made under the old one.
            try await updating.close()
            newNetwork.isOnline = true
            let updated = try await fixture.client("bob", store: .file(path), network: newNetwork) { $0.schemaVersion = 3 }
            #expect(try updated.pendingOperations().count == 2)
            try await updated.sync()
            oldNetwork.isOnline = true
            try await old.sync()
            try await updated.sync()
            try await old.sync()
            #expect(try old.failedOperations().isEmpty)
            #expect(try updated.failedOperations().isEmpty)

            let server = Dictionary(uniqueKeysWithValues: try await fixture.pullAll("ada", "jobs").changes.map { ($0.id, $0.data ?? [:]) })
            #expect(server["j1"] == ["title": "Fix roof", "rating": 6, "count": 3])
            #expect(server["j2"] == ["title": "Paint twice", "rating": 8, "count": 1])
            #expect(server["j3"] == ["title": "Mow", "rating": 1, "count": 4])
            // Each build holds the records in its own shape.
            #expect(try old.record("jobs", id: "j1")?.data == ["title": "Fix roof", "score": 6, "count": 3])
            #expect(try old.record("jobs", id: "j2")?.data == ["title": "Paint twice", "score": 8, "count": 1])
            #expect(try updated.record("jobs", id: "j1")?.data["rating"] == 6)
            #expect(try updated.record("jobs", id: "j1")?.data["count"] == 3)
            #expect(try updated.record("jobs", id: "j2")?.data["rating"] == 8)
            #expect(try updated.record("jobs", id: "j3")?.data["rating"] == 1)
            try await updated.close()
        }
    }

    @Test("a full-record save from an old build leaves a field it does not know untouched")
    func fullRecordWrite() async throws {
        let fixture = try await Self.seeded()
        try await withCleanup({ await fixture.stop() }) {
            var grown = Self.base
            grown.collections[3].fields.append(FieldSchema(name: "note", type: .string))
            try await fixture.server.server.admin.setSchema(project: "field", grown)
            _ = try await fixture.push("ada", [SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .patch, data: ["note": "keep me"])])
            let old = try await fixture.client("alice") { $0.schemaVersion = 2 }
            try await old.sync()
            try old.save("jobs", id: "j1", data: ["title": "Fix roof again", "score": 5, "count": 2])
            try await old.sync()
            let stored = try await fixture.pullAll("ada", "jobs").changes.first { $0.id == "j1" }?.data
            #expect(stored == ["title": "Fix roof again", "score": 5, "count": 2, "note": "keep me"])
        }
    }

    @Test("below the window a build gets upgrade_required, keeps its queue, and pushes it once reopened with the new number")
    func upgradeRequired() async throws {
        let fixture = try await Self.seeded()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let network = SwitchableTransport()
            let old = try await fixture.client("alice", store: .file(path), network: network) { $0.schemaVersion = 2 }
            try await old.sync()
            network.isOnline = false
            try old.patch("jobs", id: "j1", ["score": 9])
            var windowed = Self.renamed
            windowed.minimumSchemaVersion = 3
            try await fixture.server.server.admin.setSchema(project: "field", windowed)
            network.isOnline = true

            let error = await #expect(throws: CairnError.self) { try await old.sync() }
            #expect(error?.code == .upgradeRequired)
            #expect(error?.httpStatus == 426)
            #expect(error?.details?["minimumSchemaVersion"] == 3)
            #expect(try old.pendingOperations().count == 1)
            #expect(try old.failedOperations().isEmpty)
            try await old.close()

            let updated = try await fixture.client("alice", store: .file(path), network: network) { $0.schemaVersion = 3 }
            let summary = try await updated.sync()
            #expect(summary.pushed == 1)
            #expect(try updated.pendingOperations().isEmpty)
            let stored = try await fixture.pullAll("ada", "jobs").changes.first { $0.id == "j1" }?.data
            #expect(stored == ["title": "Fix roof", "rating": 9, "count": 2])
            #expect(try updated.record("jobs", id: "j1")?.data["rating"] == 9)
            try await updated.close()
        }
    }

    @Test("a change queued against a field since removed stays in the failed list with the reason")
    func removedField() async throws {
        let fixture = try await Self.seeded()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let old = try await fixture.client("alice", network: network) { $0.schemaVersion = 2 }
            try await old.sync()
            network.isOnline = false
            try old.patch("jobs", id: "j1", ["count": 8])
            var dropped = Self.base
            dropped.collections[3].fields.removeAll { $0.name == "count" }
            dropped.migrations = [SchemaMigration(collection: "jobs", step: .drop(field: "count"))]
            try await fixture.server.server.admin.setSchema(project: "field", dropped)
            network.isOnline = true
            try await old.sync()
            let failed = try old.failedOperations()
            #expect(failed.count == 1)
            #expect(failed.first?.error.code == .incompatibleSchema)
            #expect(failed.first?.error.message.contains("count") == true)
            #expect(try old.pendingOperations().isEmpty)
        }
    }

    @Test("after a collection is dropped an old build keeps syncing the others, and its change to the dropped one is failed")
    func droppedCollection() async throws {
        let fixture = try await Self.seeded()
        try await withCleanup({ await fixture.stop() }) {
            let old = try await fixture.client("alice") { $0.schemaVersion = 2 }
            try await old.sync()
            try old.patch("jobs", id: "j1", ["title": "Fix roof"])
            var dropped = Self.base
            dropped.collections.removeLast()
            dropped.migrations = [SchemaMigration(collection: "jobs", step: .drop(field: nil))]
            try await fixture.server.server.admin.setSchema(project: "field", dropped)
            _ = try await fixture.push("ada", [SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .create, data: ["title": "still here"])])
            try await old.sync()
            #expect(try old.record("notes", id: "n1")?.data["title"] == "still here")
            #expect(try old.failedOperations().map(\.collection) == ["jobs"])
        }
    }

    @Test("an app update across a declared rename migrates the local records with the same steps: nothing is downloaded again")
    func localMigration() async throws {
        let fixture = try await Self.seeded()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let old = try await fixture.client("alice", store: .file(path)) { $0.schemaVersion = 2 }
            try await old.sync()
            try await fixture.server.server.admin.setSchema(project: "field", Self.renamed)
            try await old.sync()
            #expect(try old.record("jobs", id: "j1")?.data == ["title": "Fix roof", "score": 5, "count": 2])
            try await old.close()

            let updated = try await fixture.client("alice", store: .file(path)) { $0.schemaVersion = 3 }
            #expect(try updated.record("jobs", id: "j1")?.data == ["title": "Fix roof", "rating": 5, "count": 2])
            #expect(try updated.records(Query("jobs").filter(.condition("rating", .gte, 6))).map(\.id) == ["j2"])
            let summary = try await updated.sync()
            #expect(summary.pulled == 0)
            #expect(try await updated.verify("jobs").matches)
            try await updated.close()
        }
    }
}
