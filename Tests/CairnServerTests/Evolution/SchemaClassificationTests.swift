import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// Numbered schemas and the classification of changes, over HTTP (both backends with `CAIRN_TEST_SERVER_STORAGE`).
@Suite("Schema evolution: versions and classification")
struct SchemaClassificationTests {
    let path = "/v1/projects/field/schema"

    /// `jobs`: the collection the evolution tests change.
    static let jobs = CollectionSchema(
        name: "jobs",
        fields: [
            FieldSchema(name: "title", type: .string), FieldSchema(name: "score", type: .integer), FieldSchema(name: "count", type: .integer),
            FieldSchema(name: "legacy", type: .string),
        ],
        conflictPolicy: .mergeFields)

    /// The fixture's schema with ``jobs``.
    static var base: Schema {
        var schema = Fixture.schema
        schema.collections.append(jobs)
        return schema
    }

    static func put(_ fixture: Fixture, _ schema: Schema) async throws -> HTTPReply {
        try await fixture.http.send(.PUT, "/v1/projects/field/schema", token: fixture.tokens["ada"], value: schema)
    }

    @Test("each schema set gets the next number; the same schema keeps it; GET ?version=N answers an earlier one")
    func numbered() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let first = try await fixture.http.send(.GET, path, token: fixture.tokens["rita"]).decode(Schema.self)
            #expect(first.number == 1)
            let grown = try await Self.put(fixture, Self.base).decode(Schema.self)
            #expect(grown.number == 2)
            let same = try await Self.put(fixture, Self.base).decode(Schema.self)
            #expect(same.number == 2)
            #expect(same.version == grown.version)
            let old = try await fixture.http.send(.GET, path + "?version=1", token: fixture.tokens["rita"])
            #expect(old.status == 200)
            let oldSchema = try old.decode(Schema.self)
            #expect(oldSchema.number == 1)
            #expect(oldSchema.collection(named: "jobs") == nil)
            #expect(old.header("ETag") == "\"\(first.version)\"")
            #expect(try await fixture.http.send(.GET, path + "?version=0", token: fixture.tokens["rita"]).decode(Schema.self).collections.isEmpty)
            #expect(try await fixture.http.send(.GET, path + "?version=9", token: fixture.tokens["rita"]).status == 404)
            let bad = try await fixture.http.send(.GET, path + "?version=x", token: fixture.tokens["rita"])
            #expect(bad.status == 422)
            #expect(bad.errorCode == "validation_failed")
            // A non-member learns nothing, with or without a version.
            #expect(try await fixture.http.send(.GET, path + "?version=1", token: fixture.tokens["olga"]).status == 404)
            #expect(try await fixture.http.send(.GET, path + "?version=1").status == 401)
        }
    }

    /// Additive kinds: each applies at once.
    static let additive: [(String, @Sendable (inout Schema) -> Void)] = [
        ("new collection", { $0.collections.append(CollectionSchema(name: "visits", fields: [FieldSchema(name: "site", type: .string)])) }),
        ("new optional field", { $0.collections[3].fields.append(FieldSchema(name: "note", type: .string)) }),
        ("new index", { $0.collections[3].indexes.append(["title"]) }),
        ("looser conflict policy", { $0.collections[1].conflictPolicy = .lastWriterWins }),
        ("looser rule", { $0.collections[3].rules = nil }),
    ]

    @Test("additive changes apply at once", arguments: 0..<5)
    func additiveKinds(index: Int) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            var start = Self.base
            start.collections[3].rules = DataRules(write: .condition("title", .ne, .string("locked")))
            #expect(try await Self.put(fixture, start).status == 200)
            var next = start
            Self.additive[index].1(&next)
            let reply = try await Self.put(fixture, next)
            #expect(reply.status == 200, "\(Self.additive[index].0)")
            #expect(try reply.decode(Schema.self).number == 3)
            let diff = try await fixture.server.server.admin.schemaDiff(project: "field", next)
            #expect(diff.changes.isEmpty, "the schema just set has no changes against itself")
        }
    }

    /// Breaking kinds: each is refused naming what is missing, then accepted with its declared step.
    static let breaking: [(name: String, kind: String, change: @Sendable (inout Schema) -> Void, step: SchemaMigration)] = [
        ("removed field", "drop-field", { $0.collections[3].fields.removeAll { $0.name == "legacy" } },
         SchemaMigration(collection: "jobs", step: .drop(field: "legacy"))),
        ("renamed field", "drop-field", { $0.collections[3].fields[1].name = "rating" },
         SchemaMigration(collection: "jobs", step: .rename(from: "score", to: "rating"))),
        ("changed type", "retype-field", { $0.collections[3].fields[2].type = .number },
         SchemaMigration(collection: "jobs", step: .convert(field: "count", to: .number, format: nil))),
        ("removed collection", "drop-collection", { $0.collections.removeLast() }, SchemaMigration(collection: "jobs", step: .drop(field: nil))),
        ("new required field", "required-field", { $0.collections[3].fields.append(FieldSchema(name: "priority", type: .integer, required: true)) },
         SchemaMigration(collection: "jobs", step: .fill(field: "priority", value: 0))),
        ("tighter conflict policy", "tighter-policy", { $0.collections[3].conflictPolicy = .reject },
         SchemaMigration(collection: "jobs", step: .policy(.reject))),
    ]

    @Test("breaking changes are refused naming the missing step, and applied with it", arguments: 0..<6)
    func breakingKinds(index: Int) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            #expect(try await Self.put(fixture, Self.base).status == 200)
            let kind = Self.breaking[index]
            var next = Self.base
            kind.change(&next)
            let refused = try await Self.put(fixture, next)
            #expect(refused.status == 409, "\(kind.name)")
            #expect(refused.errorCode == "incompatible_schema")
            #expect(refused.json?["error"]?["message"]?.stringValue?.contains("declares no migration") == true)
            #expect(refused.json?["error"]?["details"]?["missing"]?.arrayValue?.first?["kind"]?.stringValue == kind.kind)
            #expect(refused.json?["error"]?["details"]?["missing"]?.arrayValue?.first?["collection"] == "jobs")
            #expect(try await fixture.http.send(.GET, path, token: fixture.tokens["rita"]).decode(Schema.self).number == 2)
            next.migrations = [kind.step]
            let accepted = try await Self.put(fixture, next)
            #expect(accepted.status == 200, "\(kind.name): \(String(decoding: accepted.body, as: UTF8.self))")
            let stored = try accepted.decode(Schema.self)
            #expect(stored.number == 3)
            #expect(stored.migrations == [kind.step])
        }
    }

    @Test("a step that does not fit the current schema is 422 naming it")
    func misfit() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            #expect(try await Self.put(fixture, Self.base).status == 200)
            var next = Self.base
            next.collections[3].fields[1].name = "rating"
            next.migrations = [SchemaMigration(collection: "jobs", step: .rename(from: "nope", to: "rating"))]
            let reply = try await Self.put(fixture, next)
            #expect(reply.status == 422)
            #expect(reply.json?["error"]?["details"]?["field"] == "migrations[0]")
            next.migrations = [SchemaMigration(collection: "jobs", step: .convert(field: "score", to: .datetime, format: nil))]
            #expect(try await Self.put(fixture, next).status == 422)
            let body = #"{"collections": [], "migrations": [{"collection": "jobs", "rename": {"from": "a", "to": "b"}, "drop": {}}]}"#
            #expect(try await fixture.http.send(.PUT, path, token: fixture.tokens["ada"], body: Data(body.utf8)).status == 422)
        }
    }
}
