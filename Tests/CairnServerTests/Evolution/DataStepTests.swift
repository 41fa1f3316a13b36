import CairnProtocol
import Testing

@testable import CairnServer

@Suite("Schema evolution: steps on record data")
struct DataStepTests {
    let previous = Schema(collections: [CollectionSchema(name: "jobs", fields: [
        FieldSchema(name: "score", type: .integer), FieldSchema(name: "due", type: .string), FieldSchema(name: "size", type: .number),
    ])])

    @Test("steps are idempotent forward and revert to the old shape")
    func forwardAndBack() {
        let steps = DataStep.resolve([
            SchemaMigration(collection: "jobs", step: .rename(from: "score", to: "rating")),
            SchemaMigration(collection: "jobs", step: .convert(field: "due", to: .datetime, format: "yyyy-MM-dd")),
            SchemaMigration(collection: "jobs", step: .convert(field: "size", to: .integer, format: nil)),
            SchemaMigration(collection: "jobs", step: .fill(field: "priority", value: 0)),
        ], from: previous)
        var data: [String: JSONValue] = ["score": 5, "due": "2026-11-24", "size": 2.6]
        for step in steps { step.apply(to: &data) }
        #expect(data == ["rating": 5, "due": "2026-11-24T00:00:00.000Z", "size": 3, "priority": 0])
        let once = data
        for step in steps { step.apply(to: &data) }
        #expect(data == once)
        for step in steps.reversed() { step.revert(&data) }
        #expect(data == ["score": 5, "due": "2026-11-24", "size": 3, "priority": 0])
        // A value a conversion cannot read becomes absent; a renamed field whose new name is set keeps that value.
        var odd: [String: JSONValue] = ["score": 1, "rating": 9, "due": "soon"]
        for step in steps { step.apply(to: &odd) }
        #expect(odd == ["rating": 9, "priority": 0])
    }

    @Test("conversions follow their stated rules", arguments: [
        (JSONValue.integer(3), FieldType.integer, FieldType.number, JSONValue?.some(.integer(3))),
        (.number(2.4), .number, .integer, .integer(2)),
        (.string("12"), .string, .integer, .integer(12)),
        (.string("x"), .string, .integer, nil),
        (.integer(7), .integer, .string, .string("7")),
        (.bool(true), .boolean, .integer, .integer(1)),
        (.string("yes"), .string, .boolean, .bool(true)),
        (.string("2026-11-24T10:00:00Z"), .string, .datetime, .string("2026-11-24T10:00:00Z")),
    ])
    func conversions(value: JSONValue, from: FieldType, to: FieldType, expected: JSONValue?) {
        #expect(ValueConversion.convert(value, from: from, to: to, format: nil) == expected)
    }
}
