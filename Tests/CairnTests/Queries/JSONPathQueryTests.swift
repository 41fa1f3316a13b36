import CairnProtocol
import Foundation
import GRDB
import Testing

@testable import Cairn

@Suite("Queries on paths inside json fields, and local indexes on them")
struct JSONPathQueryTests {
    /// Notes whose json field `tags` holds an address (or something else).
    static func store() throws -> TestStore {
        let test = try TestStore()
        try test.pull([
            .init(id: "n-1", version: 1, data: ["title": "a", "tags": ["address": ["city": "Lyon", "zip": 69001]]]),
            .init(id: "n-2", version: 2, data: ["title": "b", "tags": ["address": ["city": "Brest", "zip": 29200]]]),
            .init(id: "n-3", version: 3, data: ["title": "c", "tags": ["address": ["city": "Lyon", "zip": "69002"]]]),
            .init(id: "n-4", version: 4, data: ["title": "d", "tags": ["red"]]),
            .init(id: "n-5", version: 5, data: ["title": "e"]),
        ])
        return test
    }

    static func ids(_ test: TestStore, _ query: Query) throws -> [String] { try test.store.records(query).map(\.id) }

    static func plan(_ test: TestStore, _ query: Query) throws -> String {
        try test.store.writer.read { db in
            let compiled = try test.store.compile(db, query)
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + compiled.recordsSQL, arguments: compiled.arguments)
                .map { $0["detail"] as String }.joined(separator: "; ")
        }
    }

    @Test("a filter and a sort may name a path inside a json field; values compare by JSON kind")
    func filtersAndSorts() throws {
        let test = try Self.store()
        #expect(try Self.ids(test, Query("notes").filter(.condition("tags.address.city", .eq, "Lyon"))) == ["n-1", "n-3"])
        #expect(try Self.ids(test, Query("notes").filter(.condition("tags.address.city", .ne, "Lyon"))) == ["n-2", "n-4", "n-5"])
        // A number and a string are not equal, as in a json field.
        #expect(try Self.ids(test, Query("notes").filter(.condition("tags.address.zip", .gt, 50000))) == ["n-1"])
        #expect(try Self.ids(test, Query("notes").filter(.condition("tags.address.zip", .eq, "69002"))) == ["n-3"])
        #expect(try Self.ids(test, Query("notes").filter(.condition("tags.address", .exists, true))) == ["n-1", "n-2", "n-3"])
        #expect(try Self.ids(test, Query("notes").filter(.condition("tags.address.city", .in, ["Brest", "Nantes"]))) == ["n-2"])
        let sorted = Query("notes").filter(.condition("tags.address", .exists, true)).sorted(by: "tags.address.city").sorted(by: "title", ascending: false)
        #expect(try Self.ids(test, sorted) == ["n-2", "n-3", "n-1"])
    }

    @Test("a path that starts at no json field, or whose keys are not letters, digits and _, is validation_failed")
    func badPaths() throws {
        let test = try Self.store()
        for name in ["title.x", "nope.x", "tags..x", "tags.a'b", "tags.", "tags.a-b"] {
            expectError(.validationFailed) { _ = try test.store.records(Query("notes").filter(.condition(name, .eq, "x"))) }
            expectError(.validationFailed) { _ = try test.store.records(Query("notes").sorted(by: name)) }
        }
        expectError(.invalidArgument) { try test.store.indexes.addIndex(.init(collection: "notes", kind: .index, fields: ["title.x"])) }
        expectError(.invalidArgument) { try test.store.indexes.addIndex(.init(collection: "notes", kind: .fullText, fields: ["tags.address.city"])) }
    }

    @Test("an index on a path is used by equality, range and sort on it (EXPLAIN QUERY PLAN), and is made again with a new table")
    func indexOnPath() throws {
        let test = try Self.store()
        let equality = Query("notes").filter(.condition("tags.address.city", .eq, "Lyon"))
        #expect(!(try Self.plan(test, equality)).contains("cairn_app_notes_tags.address.city"))
        try test.store.indexes.addIndex(.init(collection: "notes", kind: .index, fields: ["tags.address.city"]))
        let indexed = try Self.plan(test, equality)
        #expect(indexed.contains("USING INDEX cairn_app_notes_tags.address.city"), "\(indexed)")
        let range = Query("notes").filter(.condition("tags.address.city", .gt, "A")).filter(.condition("tags.address.city", .lt, "M"))
        #expect(try Self.plan(test, range).contains("USING INDEX cairn_app_notes_tags.address.city"))
        #expect(Set(try Self.ids(test, range)) == ["n-1", "n-2", "n-3"])
        #expect(try Self.ids(test, equality) == ["n-1", "n-3"])
        // A write keeps the index in step.
        try test.store.write(collection: "notes", id: "n-6", change: .create(["title": "f", "tags": ["address": ["city": "Lyon"]]]))
        #expect(try Self.ids(test, equality) == ["n-1", "n-3", "n-6"])
        // Defined before the schema is known, it is created with the table.
        let fresh = try LocalStore(writer: DatabaseQueue())
        try fresh.indexes.addIndex(.init(collection: "notes", kind: .index, fields: ["tags.address.city", "title"]))
        try fresh.apply(schema: TestStore.schema, etag: nil)
        let freshPlan = try fresh.writer.read { db in
            let compiled = try fresh.compile(db, equality)
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + compiled.recordsSQL, arguments: compiled.arguments).map { $0["detail"] as String }
        }
        #expect(freshPlan.joined().contains("USING INDEX cairn_app_notes_tags.address.city_title"), "\(freshPlan)")
    }
}
