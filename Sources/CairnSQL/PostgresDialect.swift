import CairnProtocol

/// PostgreSQL's spelling of ``FilterSQL``, over a record's data as `jsonb`, with the same results as SQLite's:
///
/// - Text compares by bytes (`COLLATE "C"`), as SQLite's `BINARY` does, whatever the database's locale.
/// - Each field is read as the SQL type of its schema type (``field(_:of:)``), and `json` fields by the kind of
///   the value they are compared with, through `CASE`, so a cast never meets a value of another kind.
/// - `LIKE` folds ASCII letters only and has no escape character, as SQLite's.
/// - Date-times compare by instant through `cairn_instant(text)`, a function the server's migrations create.
///
/// JSON paths are PostgreSQL text-array literals (`{title}`, `{}` for the whole document).
package struct PostgresDialect: SQLDialect {
    package init() {}

    /// Reads a declared field of the `jsonb` expression `document` as its schema type's SQL value.
    package func field(_ field: FieldSchema, of document: String) -> FieldAccess {
        let json = "(\(document) -> '\(field.name)')"
        let text = "(\(document) ->> '\(field.name)')"
        let scalar: String
        switch field.type {
        case .string, .file, .reference, .datetime: scalar = "(\(text) COLLATE \"C\")"
        case .integer, .number: scalar = "(CASE WHEN jsonb_typeof(\(json)) = 'number' THEN \(text)::numeric END)"
        case .boolean: scalar = "(CASE \(json) WHEN 'true'::jsonb THEN 1 WHEN 'false'::jsonb THEN 0 END)"
        case .json: scalar = text
        }
        return FieldAccess(scalar: scalar, jsonDocument: document, jsonPath: "{\(field.name)}")
    }

    package func jsonMember(_ field: String, of document: String) -> FieldAccess {
        FieldAccess(scalar: "(\(document) ->> '\(field)')", jsonDocument: document, jsonPath: "{\(field)}")
    }

    package func placeholder(_ position: Int) -> String { "$\(position)" }

    /// A real is bound as its exact decimal text (``exactDecimal(_:)``) and read as `numeric`: PostgreSQL would
    /// otherwise compare `numeric` with `float8` by rounding the numeric to a double, so that 9007199254740993 would
    /// equal 9007199254740992.0. SQLite, and PROTOCOL.md, compare integers and reals exactly.
    package func placeholder(_ position: Int, for argument: SQLArgument) -> String {
        if case .real = argument { return "($\(position)::numeric)" }
        return "$\(position)"
    }

    /// The decimal text of `value` that compares as `value` does: an integral double within 64 bits exactly (its
    /// shortest spelling may differ from its value by up to half a unit in the last place, and an integer could lie
    /// between them), anything else in its shortest round-trip spelling (no integer lies between a fractional
    /// double below 2^53 and that spelling, and beyond 2^63 every 64-bit integer is below both).
    package static func exactDecimal(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 9.2e18 { return String(Int64(value)) }
        return "\(value)"
    }
    package func instant(_ expression: String) -> String { "cairn_instant(\(expression))" }
    package var alwaysTrue: String { "true" }
    package var alwaysFalse: String { "false" }

    package func arrayContains(document: String, path: String, placeholder: String, types: [String]) -> String {
        let array = "(\(document) #> '\(path)')"
        let element = FieldAccess(scalar: "", jsonDocument: "element.value", jsonPath: "{}")
        // CASE, not AND: PostgreSQL may evaluate either side of AND first, and a non-array has no elements to list.
        return "(CASE WHEN jsonb_typeof(\(array)) = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(\(array)) AS element(value) WHERE \(jsonTypeIs(document: "element.value", path: "{}", types: types)) AND \(jsonScalar(element, types: types)) = \(placeholder)) ELSE false END)"
    }

    package func jsonTypeIs(document: String, path: String, types: [String]) -> String {
        let kinds = Set(types.map(Self.kind))
        return "(jsonb_typeof(\(document) #> '\(path)') IN (\(kinds.sorted().map { "'\($0)'" }.joined(separator: ", "))))"
    }

    package func jsonQuote(_ expression: String) -> String { "to_jsonb(\(expression))" }

    package func descend(_ access: FieldAccess, into keys: [String]) -> FieldAccess {
        let inner = access.jsonPath.dropFirst().dropLast()
        let path = "{" + ((inner.isEmpty ? [] : [String(inner)]) + keys).joined(separator: ",") + "}"
        return FieldAccess(scalar: "(\(access.jsonDocument) #>> '\(path)')", jsonDocument: access.jsonDocument, jsonPath: path)
    }

    /// Strings as text by bytes, numbers as `numeric`, booleans as 1 and 0 (as their arguments are bound).
    package func jsonScalar(_ access: FieldAccess, types: [String]) -> String {
        let json = "(\(access.jsonDocument) #> '\(access.jsonPath)')"
        let text = "(\(access.jsonDocument) #>> '\(access.jsonPath)')"
        switch Set(types.map(Self.kind)) {
        case ["string"]: return "(\(text) COLLATE \"C\")"
        case ["number"]: return "(CASE WHEN jsonb_typeof(\(json)) = 'number' THEN \(text)::numeric END)"
        default: return "(CASE \(json) WHEN 'true'::jsonb THEN 1 WHEN 'false'::jsonb THEN 0 END)"
        }
    }

    package func like(_ expression: String, pattern placeholder: String) -> String {
        "(translate(\(expression), \(Self.upper), \(Self.lower)) LIKE translate(\(placeholder), \(Self.upper), \(Self.lower)) ESCAPE '')"
    }

    private static let upper = "'ABCDEFGHIJKLMNOPQRSTUVWXYZ'"
    private static let lower = "'abcdefghijklmnopqrstuvwxyz'"

    /// `jsonb_typeof`'s name for one of SQLite's JSON type names.
    private static func kind(_ sqliteType: String) -> String {
        switch sqliteType {
        case "text": return "string"
        case "integer", "real": return "number"
        case "true", "false": return "boolean"
        default: return sqliteType
        }
    }
}

extension SQLDialect where Self == PostgresDialect {
    /// PostgreSQL's spelling.
    package static var postgres: PostgresDialect { PostgresDialect() }
}
