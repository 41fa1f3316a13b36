import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// Declared migrations on stored records, translation for old app builds and the window, over HTTP (both backends
/// with `CAIRN_TEST_SERVER_STORAGE`).
@Suite("Schema evolution: migrations and old app builds")
struct SchemaMigrationTests {
    /// ``SchemaClassificationTests/base`` changed in every declared way: `score` renamed `rating`, `count` an integer
    /// become a number, `legacy` dropped, a required `priority` filled with 0, and an optional `note` added.
    static var evolved: Schema {
        var schema = SchemaClassificationTests.base
        schema.collections[3].fields = [
            FieldSchema(name: "title", type: .string), FieldSchema(name: "rating", type: .integer), FieldSchema(name: "count", type: .number),
            FieldSchema(name: "priority", type: .integer, required: true), FieldSchema(name: "note", type: .string),
        ]
        schema.migrations = [
            SchemaMigration(collection: "jobs", step: .rename(from: "score", to: "rating")),
            SchemaMigration(collection: "jobs", step: .convert(field: "count", to: .number, format: nil)),
            SchemaMigration(collection: "jobs", step: .drop(field: "legacy")),
            SchemaMigration(collection: "jobs", step: .fill(field: "priority", value: 0)),
        ]
        return schema
    }

    static func create(_ id: String, _ data: [String: JSONValue]) -> SyncOperation {
        SyncOperation(opId: newOpID(), collection: "jobs", id: id, op: .create, data: data)
    }

    /// A batch sent as an app build made for schema `number`.
    static func push(_ fixture: Fixture, _ user: String, number: Int?, _ operations: [SyncOperation]) async throws -> HTTPReply {
        try await fixture.http.send(
            .POST, "/v1/projects/field/batch", token: fixture.tokens[user], body: CairnJSON.encode(BatchRequest(operations: operations)),
            headers: number.map { [CairnHeader.schemaVersion: String($0)] } ?? [:])
    }

    /// A pull of `jobs` as an app build made for schema `number`.
    static func pull(_ fixture: Fixture, number: Int?, since: String? = nil) async throws -> HTTPReply {
        let query = since.map { "?since=\(Fixture.encode($0))" } ?? ""
        return try await fixture.http.send(
            .GET, "/v1/projects/field/collections/jobs/changes" + query, token: fixture.tokens["alice"],
            headers: number.map { [CairnHeader.schemaVersion: String($0)] } ?? [:])
    }

    /// A fixture with ``SchemaClassificationTests/base`` (schema 2) and three jobs, migrated to ``evolved`` (schema 3).
    static func evolvedFixture() async throws -> (Fixture, cursor: String) {
        let fixture = try await Fixture.start()
        #expect(try await SchemaClassificationTests.put(fixture, SchemaClassificationTests.base).status == 200)
        _ = try await fixture.push("alice", [
            create("j1", ["title": "Fix roof", "score": 5, "count": 2, "legacy": "x"]), create("j2", ["title": "Paint", "score": 7]),
            create("j3", ["title": "Clean"]),
        ])
        let cursor = try await fixture.pullAll("alice", "jobs").cursor
        try await fixture.server.server.admin.setSchema(project: "field", evolved)
        return (fixture, cursor)
    }

    @Test("declared steps migrate the stored records, which reach devices as ordinary changes, once")
    func migrates() async throws {
        let (fixture, cursor) = try await Self.evolvedFixture()
        try await withCleanup({ await fixture.stop() }) {
            let changes = try await fixture.pullAll("alice", "jobs", since: cursor).changes
            #expect(changes.count == 3)
            let byID = Dictionary(uniqueKeysWithValues: changes.map { ($0.id, $0.data ?? [:]) })
            #expect(byID["j1"] == ["title": "Fix roof", "rating": 5, "count": 2, "priority": 0])
            #expect(byID["j2"] == ["title": "Paint", "rating": 7, "priority": 0])
            #expect(byID["j3"] == ["title": "Clean", "priority": 0])
            let versions = try await fixture.server.server.admin.schemaVersions(project: "field")
            #expect(versions.map(\.schema.number) == [0, 1, 2, 3])
            #expect(versions[3].migration.state == .done)
            #expect(versions[3].migration.migrated == 3)
            #expect(try await fixture.server.server.admin.migrate(project: "field") == 0)
            // Sending the same file again, its steps included, changes nothing.
            let again = try await fixture.server.server.admin.setSchema(project: "field", Self.evolved)
            #expect(again.number == 3)
            #expect(try await fixture.server.server.admin.schemaVersions(project: "field").count == 4)
            // The current build pushes in the new shape; a required field is required.
            let missing = try await fixture.push("alice", [Self.create("j9", ["title": "New"])])
            #expect(missing[0].error?.code == .validationFailed)
        }
    }

    @Test("an old build's records are translated both ways, and its full-record writes never clear what it does not know")
    func oldBuild() async throws {
        let (fixture, _) = try await Self.evolvedFixture()
        try await withCleanup({ await fixture.stop() }) {
            // A new build sets the field the old build does not know.
            _ = try await fixture.push("bob", [SyncOperation(opId: newOpID(), collection: "jobs", id: "j2", op: .patch, data: ["note": "keep me"])])

            let page = try await Self.pull(fixture, number: 2).decode(ChangesPage.self)
            #expect(page.schemaNumber == 2)
            let j1 = try #require(page.changes.first { $0.id == "j1" }?.data)
            #expect(j1["score"] == 5)
            #expect(j1["rating"] == nil)
            #expect(try await Self.pull(fixture, number: nil).decode(ChangesPage.self).schemaNumber == 3)
            // Its download query names the old field too.
            let filter = Fixture.encode(#"{"field": "score", "op": "gte", "value": 6}"#)
            let filtered = try await fixture.http.send(
                .GET, "/v1/projects/field/collections/jobs/changes?where=\(filter)", token: fixture.tokens["alice"],
                headers: [CairnHeader.schemaVersion: "2"]).decode(ChangesPage.self)
            #expect(filtered.changes.map(\.id) == ["j2"])
            #expect(filtered.changes.first?.data?["score"] == 7)

            // A full-record write from the old build: its renamed field is translated, the note it does not know is kept.
            let update = SyncOperation(opId: newOpID(), collection: "jobs", id: "j2", op: .update, data: ["title": "Paint twice", "score": 9])
            let answered = try await Self.push(fixture, "alice", number: 2, [update]).decode(BatchResponse.self).results[0]
            #expect(answered.status == .applied)
            #expect(answered.record?.data["score"] == 9)
            #expect(answered.record?.data["rating"] == nil)
            // A patch of a converted field, and a create lacking the new required field.
            let patch = SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .patch, data: ["count": 4])
            let created = Self.create("j4", ["title": "Mow", "score": 3])
            let results = try await Self.push(fixture, "alice", number: 2, [patch, created]).decode(BatchResponse.self).results
            #expect(results.map(\.status) == [.applied, .applied])

            let stored = Dictionary(uniqueKeysWithValues: try await fixture.pullAll("alice", "jobs").changes.map { ($0.id, $0.data ?? [:]) })
            #expect(stored["j2"] == ["title": "Paint twice", "rating": 9, "priority": 0, "note": "keep me"])
            #expect(stored["j1"]?["count"] == 4)
            #expect(stored["j4"] == ["title": "Mow", "rating": 3, "priority": 0])

            // A change queued against the dropped field is refused with the reason (the SDK keeps it in its failed list).
            let dropped = SyncOperation(opId: newOpID(), collection: "jobs", id: "j3", op: .patch, data: ["legacy": "y"])
            let refused = try await Self.push(fixture, "alice", number: 2, [dropped]).decode(BatchResponse.self).results[0]
            #expect(refused.status == .rejected)
            #expect(refused.error?.code == .incompatibleSchema)
            #expect(refused.error?.message.contains("legacy") == true)
        }
    }

    @Test("below the window: 426 upgrade_required with the minimum; an operation's own schemaVersion is still translated")
    func window() async throws {
        let (fixture, _) = try await Self.evolvedFixture()
        try await withCleanup({ await fixture.stop() }) {
            var current = try await fixture.http.send(.GET, "/v1/projects/field/schema", token: fixture.tokens["ada"]).decode(Schema.self)
            current.migrations = []
            current.minimumSchemaVersion = 3
            let set = try await fixture.http.send(.PUT, "/v1/projects/field/schema", token: fixture.tokens["ada"], value: current)
            #expect(set.status == 200)
            #expect(try set.decode(Schema.self).number == 3)
            #expect(try set.decode(Schema.self).minimumSchemaVersion == 3)

            let pulled = try await Self.pull(fixture, number: 2)
            #expect(pulled.status == 426)
            #expect(pulled.errorCode == "upgrade_required")
            #expect(pulled.json?["error"]?["details"]?["minimumSchemaVersion"] == 3)
            let pushed = try await Self.push(fixture, "alice", number: 2, [Self.create("j5", ["title": "x", "score": 1])])
            #expect(pushed.status == 426)
            let digest = try await fixture.http.send(
                .GET, "/v1/projects/field/collections/jobs/digest", token: fixture.tokens["alice"], headers: [CairnHeader.schemaVersion: "2"])
            #expect(digest.status == 426)
            #expect(try await Self.pull(fixture, number: 3).status == 200)
            let bad = try await Self.pull(fixture, number: nil, since: nil)
            #expect(bad.status == 200)
            let malformed = try await fixture.http.send(
                .GET, "/v1/projects/field/collections/jobs/changes", token: fixture.tokens["alice"], headers: [CairnHeader.schemaVersion: "two"])
            #expect(malformed.status == 422)

            // A change queued by the old build, sent by the updated one: translated from the shape it was made in.
            var queued = Self.create("j5", ["title": "Queued", "score": 1])
            queued.schemaVersion = 2
            let results = try await Self.push(fixture, "alice", number: 3, [queued]).decode(BatchResponse.self).results
            #expect(results[0].status == .applied)
            // Answered in the shape of the build that sent it.
            #expect(results[0].record?.data == ["title": "Queued", "rating": 1, "priority": 0])
            let stored = try await fixture.pullAll("alice", "jobs").changes.first { $0.id == "j5" }?.data
            #expect(stored == ["title": "Queued", "rating": 1, "priority": 0])
        }
    }

    @Test("a dropped collection gives an old build empty pulls and refused pushes, and a current build 404")
    func droppedCollection() async throws {
        let (fixture, _) = try await Self.evolvedFixture()
        try await withCleanup({ await fixture.stop() }) {
            var dropped = Self.evolved
            dropped.collections.removeLast()
            dropped.migrations = [SchemaMigration(collection: "jobs", step: .drop(field: nil))]
            let stored = try await fixture.server.server.admin.setSchema(project: "field", dropped)
            #expect(stored.number == 4)
            let old = try await Self.pull(fixture, number: 3)
            #expect(old.status == 200)
            let page = try old.decode(ChangesPage.self)
            #expect(page.changes.isEmpty && !page.hasMore && page.schemaNumber == 3)
            let next = try await Self.pull(fixture, number: 3, since: page.cursor)
            #expect(next.status == 200)
            #expect(try await Self.pull(fixture, number: nil).status == 404)
            let pushed = try await Self.push(fixture, "alice", number: 3, [Self.create("j7", ["title": "x", "rating": 1, "priority": 1])])
            let result = try pushed.decode(BatchResponse.self).results[0]
            #expect(result.status == .rejected)
            #expect(result.error?.code == .validationFailed)
        }
    }

    @Test("an old build's retry after the schema changed again answers its first result")
    func retryAcrossChanges() async throws {
        let (fixture, _) = try await Self.evolvedFixture()
        try await withCleanup({ await fixture.stop() }) {
            let operation = Self.create("j8", ["title": "Retry", "score": 3])
            let first = try await Self.push(fixture, "alice", number: 2, [operation]).decode(BatchResponse.self).results[0]
            #expect(first.status == .applied)
            var next = Self.evolved
            next.collections[3].fields[1].name = "stars"
            next.migrations = [SchemaMigration(collection: "jobs", step: .rename(from: "rating", to: "stars"))]
            try await fixture.server.server.admin.setSchema(project: "field", next)
            let again = try await Self.push(fixture, "alice", number: 2, [operation]).decode(BatchResponse.self).results[0]
            #expect(again.status == .applied)
            #expect(again.record?.version == first.record?.version)
            let stored = try await fixture.pullAll("alice", "jobs").changes.first { $0.id == "j8" }?.data
            #expect(stored?["stars"] == 3)
        }
    }
}
