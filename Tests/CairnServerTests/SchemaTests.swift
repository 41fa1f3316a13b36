import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Projects and schemas")
struct SchemaTests {
    let path = "/v1/projects/field/schema"

    @Test("GET answers the schema with an ETag, and 304 when it has not changed")
    func etag() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let reply = try await fixture.http.send(.GET, path, token: fixture.tokens["rita"])
            #expect(reply.status == 200)
            let schema = try reply.decode(Schema.self)
            #expect(schema.collections == Fixture.schema.collections)
            #expect(schema.version.count == 64)
            let etag = try #require(reply.header("ETag"))
            #expect(etag == "\"\(schema.version)\"")
            let cached = try await fixture.http.send(.GET, path, token: fixture.tokens["rita"], headers: ["If-None-Match": etag])
            #expect(cached.status == 304)
            #expect(cached.body.isEmpty)
            let stale = try await fixture.http.send(.GET, path, token: fixture.tokens["rita"], headers: ["If-None-Match": "\"other\""])
            #expect(stale.status == 200)
        }
    }

    @Test("PUT accepts additive changes and changes the version")
    func additive() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            var grown = Fixture.schema
            grown.collections[0].fields.append(FieldSchema(name: "priority", type: .integer))
            grown.collections[0].indexes.append(["priority"])
            grown.collections.append(CollectionSchema(name: "visits", fields: [FieldSchema(name: "site", type: .string)]))
            let reply = try await fixture.http.send(.PUT, path, token: fixture.tokens["ada"], value: grown)
            #expect(reply.status == 200)
            let stored = try reply.decode(Schema.self)
            #expect(stored.version != SchemaVersioning.stamped(Fixture.schema).version)
            #expect(stored.collection(named: "visits") != nil)
            let fetched = try await fixture.http.send(.GET, path, token: fixture.tokens["rita"]).decode(Schema.self)
            #expect(fetched == stored)
            // The new field is validated on writes at once.
            let results = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n", op: .create, data: ["priority": "high"])])
            #expect(results[0].error?.code == .validationFailed)
            // Sending the same schema again is a no-op with the same version.
            let same = try await fixture.http.send(.PUT, path, token: fixture.tokens["ada"], value: grown).decode(Schema.self)
            #expect(same.version == stored.version)
        }
    }

    @Test("PUT refuses to drop or retype fields or tighten a policy without steps: 409 incompatible_schema, and the schema is unchanged")
    func incompatible() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            var dropped = Fixture.schema
            dropped.collections[0].fields.removeLast()
            var retyped = Fixture.schema
            retyped.collections[0].fields[0].type = .integer
            var noCollection = Fixture.schema
            noCollection.collections.removeLast()
            var policy = Fixture.schema
            policy.collections[2].conflictPolicy = .reject
            for schema in [dropped, retyped, noCollection, policy] {
                let reply = try await fixture.http.send(.PUT, path, token: fixture.tokens["ada"], value: schema)
                #expect(reply.status == 409)
                #expect(reply.errorCode == "incompatible_schema")
            }
            let fetched = try await fixture.http.send(.GET, path, token: fixture.tokens["rita"]).decode(Schema.self)
            #expect(fetched.collections == Fixture.schema.collections)
        }
    }

    @Test("PUT refuses a schema with a key no level knows: 422 naming its path and the nearest key, and nothing is stored")
    func unknownKeys() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let before = try await fixture.http.send(.GET, path, token: fixture.tokens["ada"]).decode(Schema.self)
            let body: JSONValue = ["collections": [["name": "jobs", "confictPolicy": "reject", "fields": [["name": "t", "type": "string", "requird": true]]]]]
            let reply = try await fixture.http.send(.PUT, path, token: fixture.tokens["ada"], json: body)
            #expect(reply.status == 422)
            let error = try reply.decode(ErrorEnvelope.self).error
            #expect(error.code == .validationFailed && error.details?["field"] == "collections[0].confictPolicy")
            #expect(error.details?["suggestion"] == "conflictPolicy")
            #expect(error.message.contains("did you mean \"conflictPolicy\"?"), "\(error.message)")
            let after = try await fixture.http.send(.GET, path, token: fixture.tokens["ada"]).decode(Schema.self)
            #expect(after.version == before.version)
        }
    }

    @Test("PUT refuses malformed schemas with 422", arguments: [
        #"{"collections": [{"name": "Bad-Name", "fields": []}]}"#,
        #"{"collections": [{"name": "cairn_x", "fields": []}]}"#,
        #"{"collections": [{"name": "a", "fields": [{"name": "x", "type": "blob"}]}]}"#,
        #"{"collections": [{"name": "a", "fields": [{"name": "id", "type": "string"}]}]}"#,
        #"{"collections": [{"name": "a", "fields": [{"name": "x", "type": "string"}, {"name": "x", "type": "string"}]}]}"#,
        #"{"collections": [{"name": "a", "fields": [], "indexes": [["nope"]]}]}"#,
        #"{"collections": [{"name": "a", "fields": [], "conflictPolicy": "coin-flip"}]}"#,
        #"{"collections": 3}"#,
    ])
    func malformed(body: String) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let reply = try await fixture.http.send(.PUT, path, token: fixture.tokens["ada"], body: Data(body.utf8))
            #expect(reply.status == 422)
            #expect(reply.errorCode == "validation_failed")
        }
    }
}
