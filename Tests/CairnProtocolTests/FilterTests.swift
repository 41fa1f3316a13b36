import CairnProtocol
import Foundation
import Testing

@Suite("Filters")
struct FilterTests {
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
}
