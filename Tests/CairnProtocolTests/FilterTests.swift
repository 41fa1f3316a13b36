import CairnProtocol
import Foundation
import Testing

@Suite("Filters")
struct FilterTests {
    let notes = CollectionSchema(name: "notes", fields: [
        FieldSchema(name: "title", type: .string), FieldSchema(name: "done", type: .boolean), FieldSchema(name: "count", type: .integer),
        FieldSchema(name: "due", type: .datetime), FieldSchema(name: "tags", type: .json),
    ])

    func compile(_ filter: Filter) throws(ErrorBody) -> CompiledFilter {
        try FilterSQL.compile(filter, collection: notes) { .jsonMember($0.name, of: "data") }
    }

    @Test("filters decode from PROTOCOL.md's JSON and encode back")
    func coding() throws {
        let text = #"{"and": [{"field": "done", "op": "eq", "value": false}, {"or": [{"field": "title", "op": "like", "value": "%milk%"}, {"field": "due", "op": "lt", "value": "2026-12-01T00:00:00Z"}]}]}"#
        let filter = try CairnJSON.decode(Filter.self, from: Array(text.utf8))
        #expect(filter == .and([.condition("done", .eq, false), .or([.condition("title", .like, "%milk%"), .condition("due", .lt, "2026-12-01T00:00:00Z")])]))
        let encoded = try CairnJSON.encode(filter)
        #expect(try CairnJSON.decode(Filter.self, from: encoded) == filter)
        #expect(throws: (any Error).self) { try CairnJSON.decode(Filter.self, from: Array(#"{"field": "a", "op": "near", "value": 1}"#.utf8)) }
        #expect(throws: (any Error).self) { try CairnJSON.decode(Filter.self, from: Array(#"{"and": [], "or": []}"#.utf8)) }
    }

    @Test("values are bound as arguments, never spliced into the SQL")
    func parameterised() throws {
        let hostile = "x'); DROP TABLE records; --"
        let compiled = try compile(.or([.condition("title", .eq, .string(hostile)), .condition("id", .in, [.string(hostile)])]))
        #expect(!compiled.sql.contains("DROP"))
        #expect(compiled.arguments == [.text(hostile), .text(hostile)])
    }

    @Test("unknown fields and values of the wrong type are validation_failed", arguments: [
        Filter.condition("nope", .eq, 1), .condition("count", .eq, "1"), .condition("count", .like, "1%"),
        .condition("done", .gt, true), .condition("title", .in, "a"), .condition("tags", .contains, ["a"]),
        .condition("title", .contains, "a"), .condition("due", .lt, "tomorrow"), .condition("title", .exists, 1),
        .condition("count", .lt, nil),
    ])
    func invalid(filter: Filter) {
        #expect(throws: ErrorBody.self) { try compile(filter) }
        do { _ = try compile(filter) } catch { #expect(error.code == .validationFailed) }
    }

    @Test("empty and/or are constants")
    func empties() throws {
        #expect(try compile(.and([])).sql == "1")
        #expect(try compile(.or([])).sql == "0")
        #expect(try compile(.condition("count", .in, [])).sql == "0")
    }
}
