import CairnProtocol
import Foundation
import GRDB
import Testing

@testable import Cairn

@Suite("Queries: filters, sorting, counting, key paths and indexes on the local store")
struct LocalQueryTests {
    struct Note: Codable {
        var id: String?
        var title: String?
        var count: Int?
        var tags: [String]?
    }

    /// A store holding five pulled notes.
    static func store() throws -> TestStore {
        let test = try TestStore()
        try test.pull([
            .init(id: "n-1", version: 1, data: ["title": "Fire exit", "count": 3, "tags": ["red"]]),
            .init(id: "n-2", version: 2, data: ["title": "fire alarm", "count": 1]),
            .init(id: "n-3", version: 3, data: ["title": "Électricité", "count": 3, "tags": ["red", "blue"]]),
            .init(id: "n-4", version: 4, data: ["count": 2]),
            .init(id: "n-5", version: 5, data: ["title": "Water", "count": 2.5]),
        ])
        return test
    }

    static func ids(_ test: TestStore, _ query: Query) throws -> [String] { try test.store.records(query).map(\.id) }

    @Test("sorting on several fields, then by id; limit and offset; count within them")
    func sortLimitCount() throws {
        let test = try Self.store()
        let query = Query("notes").sorted(by: "count", ascending: false).sorted(by: "title")
        #expect(try Self.ids(test, query) == ["n-1", "n-3", "n-5", "n-4", "n-2"])
        #expect(try Self.ids(test, query.limit(2, offset: 1)) == ["n-3", "n-5"])
        #expect(try test.store.count(query) == 5)
        #expect(try test.store.count(query.limit(2, offset: 4)) == 1)
        #expect(try test.store.count(Query("notes").filter(.condition("count", .gte, 2.5))) == 3)
        #expect(try test.store.count(Query("notes", offset: 3)) == 2)
        expectError(.validationFailed) { _ = try test.store.records(Query("notes").sorted(by: "nope")) }
        expectError(.invalidArgument) { _ = try test.store.records(Query("notes").limit(-1)) }
    }

    @Test("key-path filters name the property's field and encode values as the record does")
    func keyPathFilters() throws {
        let test = try Self.store()
        #expect(Filter.fieldName(\Note.title) == "title")
        #expect(try Self.ids(test, Query("notes").filter(\Note.count == 3)) == ["n-1", "n-3"])
        #expect(try Self.ids(test, Query("notes").filter(\Note.count > 1 && \Note.count < 3)) == ["n-4", "n-5"])
        #expect(try Self.ids(test, Query("notes").filter(\Note.title == nil || \Note.count <= 1)) == ["n-2", "n-4"])
        #expect(try Self.ids(test, Query("notes").filter(\Note.title != "Water")) == ["n-1", "n-2", "n-3", "n-4"])
        #expect(try Self.ids(test, Query("notes").filter(.field(\Note.count, in: [1, 2]))) == ["n-2", "n-4"])
        #expect(try Self.ids(test, Query("notes").filter(.field(\Note.tags, exists: true))) == ["n-1", "n-3"])
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(Filter.encoded(date) == .string("2027-01-15T08:00:00.000Z") || Filter.encoded(date).stringValue?.hasPrefix("2027-01-15T08:00:00") == true)
        // Typed reads decode the records the filter selects.
        let notes = try test.store.records(Query("notes").filter(\Note.count == 3)).map { try CairnClient.decode(Note.self, $0) }
        #expect(notes.map(\.title) == ["Fire exit", "Électricité"])
    }

    @Test("an app index is created before or after the table exists, is used by equality and range filters, and is created with a table defined later")
    func appIndexes() throws {
        let test = try Self.store()
        let plan = { (query: Query) throws -> String in
            try test.store.writer.read { db in
                let compiled = try test.store.compile(db, query)
                return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + compiled.recordsSQL, arguments: compiled.arguments)
                    .map { $0["detail"] as String }.joined(separator: "; ")
            }
        }
        let equality = Query("notes").filter(.condition("count", .eq, 3))
        #expect(!(try plan(equality)).contains("cairn_app_notes_count"))
        try test.store.indexes.addIndex(.init(collection: "notes", kind: .index, fields: ["count"]))
        #expect(try plan(equality).contains("USING INDEX cairn_app_notes_count"))
        #expect(try plan(Query("notes").filter(.condition("count", .gt, 1)).filter(.condition("count", .lt, 3))).contains("USING INDEX cairn_app_notes_count"))
        #expect(try Self.ids(test, equality) == ["n-1", "n-3"])
        // Unknown fields are refused while the schema is known.
        expectError(.invalidArgument) { try test.store.indexes.addIndex(.init(collection: "notes", kind: .index, fields: ["nope"])) }
        expectError(.invalidArgument) { try test.store.indexes.addIndex(.init(collection: "nope", kind: .index, fields: ["count"])) }
        // Defined before the schema is known, an index is created with the table.
        let fresh = try LocalStore(writer: DatabaseQueue())
        try fresh.indexes.addIndex(.init(collection: "notes", kind: .index, fields: ["count", "title"]))
        try fresh.indexes.addIndex(.init(collection: "notes", kind: .fullText, fields: ["title"]))
        try fresh.apply(schema: TestStore.schema, etag: nil)
        try fresh.write(collection: "notes", id: "n-1", change: .create(["title": "fire", "count": 1]))
        let freshPlan = try fresh.writer.read { db in
            let compiled = try fresh.compile(db, equality)
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + compiled.recordsSQL, arguments: compiled.arguments).map { $0["detail"] as String }
        }
        #expect(freshPlan.joined().contains("USING INDEX cairn_app_notes_count_title"))
        #expect(try fresh.records(Query("notes").matching("fire")).map(\.id) == ["n-1"])
        // Wiping the store (a user switch) forgets them with everything else.
        try test.store.wipe()
        try test.store.apply(schema: TestStore.schema, etag: nil)
        #expect(try !plan(equality).contains("cairn_app_notes_count"))
    }

    @Test("full-text search follows local writes, pulls and deletions, ranks its results and applies the filter")
    func fullTextSearch() throws {
        let test = try Self.store()
        let store = test.store
        expectError(.invalidArgument) { _ = try store.records(Query("notes").matching("fire")) }
        expectError(.invalidArgument) { try store.indexes.addIndex(.init(collection: "notes", kind: .fullText, fields: ["count"])) }
        try store.indexes.addIndex(.init(collection: "notes", kind: .fullText, fields: ["title"]))
        // Rows stored before the index are found; case and accents are ignored; the last word is a prefix.
        #expect(Set(try Self.ids(test, Query("notes").matching("FIRE"))) == ["n-1", "n-2"])
        #expect(try Self.ids(test, Query("notes").matching("electricite")) == ["n-3"])
        #expect(Set(try Self.ids(test, Query("notes").matching("fi"))) == ["n-1", "n-2"])
        #expect(try Self.ids(test, Query("notes").matching("fire ex")) == ["n-1"])
        #expect(try Self.ids(test, Query("notes").matching("fire").filter(.condition("count", .eq, 1))) == ["n-2"])
        #expect(try store.count(Query("notes").matching("fire")) == 2)
        // FTS syntax in the app's text is read as words.
        #expect(try Self.ids(test, Query("notes").matching("\"fire\" OR NOT water*")) == [])
        // Local writes, pulls and deletions keep the index in step.
        try store.write(collection: "notes", id: "n-6", change: .create(["title": "Fire fire fire drill"]))
        try store.write(collection: "notes", id: "n-1", change: .patch(["title": "Emergency exit"]))
        try test.pull([.init(id: "n-2", version: 9, data: ["title": "smoke alarm"]), .init(id: "n-5", version: 10, data: nil)], cursor: "c2")
        #expect(try Self.ids(test, Query("notes").matching("fire")) == ["n-6"])
        #expect(try Self.ids(test, Query("notes").matching("exit")) == ["n-1"])
        #expect(try Self.ids(test, Query("notes").matching("water")) == [])
        try store.write(collection: "notes", id: "n-6", change: .delete)
        #expect(try Self.ids(test, Query("notes").matching("fire")) == [])
        // Ranking: the record with more matches comes first.
        try store.write(collection: "notes", id: "r-1", change: .create(["title": "alarm test"]))
        try store.write(collection: "notes", id: "r-2", change: .create(["title": "alarm alarm alarm"]))
        #expect(try Self.ids(test, Query("notes").matching("alarm")).first == "r-2")
        // The index can be dropped.
        try store.indexes.removeFullText(collection: "notes")
        expectError(.invalidArgument) { _ = try store.records(Query("notes").matching("fire")) }
    }
}
