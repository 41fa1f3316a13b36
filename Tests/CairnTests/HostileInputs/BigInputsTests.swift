import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing
@testable import Cairn

/// Big and odd inputs end to end (issue: hostile conditions): each works, or is refused with a clear `4xx`.
@Suite("Big and odd inputs", .serialized)
struct BigInputsTests {
    @Test("a project of 500 collections, a collection of 1,000 fields and 100 indexes: the schema is set, a store opens it, and records sync")
    func wideSchemas() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let many = (0..<500).map { CollectionSchema(name: "c\($0)", fields: [FieldSchema(name: "title", type: .string)]) }
            let fields = (0..<1000).map { FieldSchema(name: "f\($0)", type: $0 % 2 == 0 ? .string : .integer) }
            let indexes = (0..<100).map { ["f\($0 * 2)"] }
            let wide = CollectionSchema(name: "wide", fields: fields, indexes: indexes)
            try await fixture.server.server.admin.setSchema(project: Fixture.project, Schema(collections: Fixture.schema.collections + many + [wide]))
            var data: [String: JSONValue] = [:]
            for (index, field) in fields.enumerated() { data[field.name] = index % 2 == 0 ? .string("v\(index)") : .integer(Int64(index)) }
            let pushed = try await fixture.push("bob", [
                SyncOperation(opId: newOpID(), collection: "wide", id: "w-1", op: .create, data: data),
                SyncOperation(opId: newOpID(), collection: "c499", id: "last", op: .create, data: ["title": "the 500th"]),
            ])
            #expect(pushed.allSatisfy { $0.status == .applied })
            let alice = try await fixture.client("alice")
            try await alice.sync()
            #expect(try alice.record("wide", id: "w-1")?.data == data)
            #expect(try alice.record("c499", id: "last")?.data["title"] == "the 500th")
            #expect(try alice.records(Query("wide").filter(.condition("f998", .eq, "v998"))).map(\.id) == ["w-1"])
            try alice.create("c250", id: "mid", data: ["title": "from a device"])
            try await alice.sync()
            #expect(try await fixture.pullAll("bob", "c250").changes.map(\.id) == ["mid"])
            try await alice.close()
        }
    }
}

extension MemoryHeavy {
    /// Records near the batch limit, beside the other memory-heavy tests.
    @Suite("Big records")
    struct BigRecordTests {
        @Test("a 9 MB record syncs both ways; a record that makes its batch larger than 10 MB is refused with 413, and the device keeps it queued with the reason")
        func bigRecords() async throws {
            let fixture = try await Fixture.start()
            try await withCleanup({ await fixture.stop() }) {
                let nine = JSONValue.string(String(repeating: "n", count: 9 << 20))
                let alice = try await fixture.client("alice")
                try alice.create("notes", id: "nine", data: ["title": nine])
                try await alice.sync()
                let bob = try await fixture.client("bob")
                try await bob.sync()
                #expect(try bob.record("notes", id: "nine")?.data["title"] == nine)
                let eleven = String(repeating: "e", count: 11 << 20)
                let reply = try await fixture.http.send(
                    .POST, "/v1/projects/field/batch", token: fixture.tokens["alice"],
                    value: BatchRequest(operations: [SyncOperation(opId: newOpID(), collection: "notes", id: "eleven", op: .create, data: ["title": .string(eleven)])]))
                #expect(reply.status == 413)
                #expect(try reply.decode(ErrorEnvelope.self).error.code == .payloadTooLarge)
                try alice.create("notes", id: "eleven", data: ["title": .string(eleven)])
                _ = try? await alice.sync()
                let waiting = try alice.pendingOperations().map(\.recordID) + (try alice.failedOperations().map(\.recordID))
                #expect(waiting.contains("eleven"))
                try await alice.close()
                try await bob.close()
            }
        }
    }
}
