import CairnProtocol
import CairnSQL
import Foundation
import Testing

/// A dialect with numbered placeholders and its own spellings, to show the compiler takes every spelling from it.
struct NumberedDialect: SQLDialect {
    func jsonMember(_ field: String, of document: String) -> FieldAccess {
        FieldAccess(scalar: "(\(document) ->> '\(field)')", jsonDocument: document, jsonPath: field)
    }
    func placeholder(_ position: Int) -> String { "$\(position)" }
    func instant(_ expression: String) -> String { "(\(expression))::timestamptz" }
    var alwaysTrue: String { "TRUE" }
    var alwaysFalse: String { "FALSE" }
    func arrayContains(document: String, path: String, placeholder: String, types: [String]) -> String {
        "contains(\(document), \(path), \(placeholder), \(types))"
    }
    func jsonTypeIs(document: String, path: String, types: [String]) -> String { "kind(\(document), \(path)) IN \(types)" }
    func jsonQuote(_ expression: String) -> String { "to_json(\(expression))" }
    func like(_ expression: String, pattern placeholder: String) -> String { "like(\(expression), \(placeholder))" }
    func descend(_ access: FieldAccess, into keys: [String]) -> FieldAccess {
        let path = ([access.jsonPath] + keys).joined(separator: "/")
        return FieldAccess(scalar: "at(\(access.jsonDocument), \(path))", jsonDocument: access.jsonDocument, jsonPath: path)
    }
}

@Suite("Filter compilation")
struct FilterSQLTests {
    let notes = CollectionSchema(name: "notes", fields: [
        FieldSchema(name: "title", type: .string), FieldSchema(name: "done", type: .boolean), FieldSchema(name: "count", type: .integer),
        FieldSchema(name: "due", type: .datetime), FieldSchema(name: "tags", type: .json),
    ])

    func compile(_ filter: Filter) throws(ErrorBody) -> CompiledFilter {
        try FilterSQL.compile(filter, collection: notes, dialect: .sqlite) { SQLiteDialect().jsonMember($0.name, of: "data") }
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

    @Test("every spelling comes from the dialect, placeholders numbered from the statement's position")
    func dialectSpelling() throws {
        let filter: Filter = .and([
            .condition("title", .eq, "a"), .condition("due", .lt, "2026-12-01T00:00:00Z"), .condition("tags", .contains, "x"),
            .or([]),
        ])
        let dialect = NumberedDialect()
        let compiled = try FilterSQL.compile(filter, collection: notes, dialect: dialect, firstPlaceholder: 4) {
            dialect.jsonMember($0.name, of: "data")
        }
        #expect(compiled.sql == "(((data ->> 'title') = $4) AND (((data ->> 'due'))::timestamptz < ($5)::timestamptz) AND contains(data, tags, $6, [\"text\"]) AND FALSE)")
        #expect(compiled.arguments == [.text("a"), .text("2026-12-01T00:00:00Z"), .text("x")])
        #expect(!compiled.sql.contains("json_extract") && !compiled.sql.contains("cairn_instant"))
    }
}

@Suite("Filter compilation: paths inside json fields")
struct FilterSQLPathTests {
    let sites = CollectionSchema(name: "sites", fields: [FieldSchema(name: "name", type: .string), FieldSchema(name: "address", type: .json)])

    @Test("a path reads the value at its keys through the dialect and compares it as a json value; bad paths name themselves")
    func paths() throws {
        let compiled = try FilterSQL.compile(.condition("address.city", .eq, "Lyon"), collection: sites, dialect: NumberedDialect()) { field in
            NumberedDialect().jsonMember(field.name, of: "data")
        }
        #expect(compiled.sql == "(kind(data, address/city) IN [\"text\"] AND at(data, address/city) = $1)")
        #expect(compiled.arguments == [.text("Lyon")])
        let sqlite = try FilterSQL.compile(.condition("address.geo.lat", .gt, 45), collection: sites, dialect: .sqlite) { field in
            SQLiteDialect().jsonMember(field.name, of: "data")
        }
        #expect(sqlite.sql.contains("json_extract(data, '$.address.geo.lat') > ?"))
        let postgres = try FilterSQL.compile(.condition("address.geo.lat", .exists, true), collection: sites, dialect: .postgres) { field in
            PostgresDialect().field(field, of: "data")
        }
        #expect(postgres.sql == "((data #>> '{address,geo,lat}') IS NOT NULL)")
        for name in ["name.x", "missing.x", "address..x", "address.x'y", "address."] {
            #expect(throws: ErrorBody.self) {
                _ = try FilterSQL.compile(.condition(name, .eq, "x"), collection: sites, dialect: .sqlite) { SQLiteDialect().jsonMember($0.name, of: "data") }
            }
        }
    }
}
