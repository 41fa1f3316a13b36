/// What differs between SQL engines when a ``Filter`` is compiled: how a JSON member is read, how placeholders
/// and booleans are written, how timestamps compare and how a JSON array is searched.
///
/// The filter's semantics (PROTOCOL.md) live once, in ``FilterSQL``; a backend supplies only its spelling.
///
/// ```swift
/// let compiled = try FilterSQL.compile(filter, collection: notes, dialect: .sqlite) { field in
///     SQLiteDialect().jsonMember(field.name, of: "data")
/// }
/// ```
package protocol SQLDialect: Sendable {
    /// Reads `field` out of the JSON column `document`.
    func jsonMember(_ field: String, of document: String) -> FieldAccess
    /// The placeholder of the argument at `position` (1-based, counted over the whole statement).
    func placeholder(_ position: Int) -> String
    /// The placeholder of `argument` at `position`, with any conversion the engine needs to compare it exactly.
    func placeholder(_ position: Int, for argument: SQLArgument) -> String
    /// An expression that compares timestamps in RFC 3339 text by instant, not by spelling.
    func instant(_ expression: String) -> String
    /// The constant true and false conditions.
    var alwaysTrue: String { get }
    var alwaysFalse: String { get }
    /// True when the JSON array at `path` of `document` holds a scalar of one of the JSON `types` (SQLite's names:
    /// `text`, `integer`, `real`, `true`, `false`) equal to the argument `placeholder`.
    func arrayContains(document: String, path: String, placeholder: String, types: [String]) -> String
    /// True when the JSON value at `path` of `document` is of one of the JSON `types`.
    func jsonTypeIs(document: String, path: String, types: [String]) -> String
    /// The JSON text of the string expression `expression` (so `id` can be searched like a JSON document).
    func jsonQuote(_ expression: String) -> String
    /// The value of a `json` field, as an SQL scalar comparable with an argument of the JSON `types` (only called
    /// once ``jsonTypeIs(document:path:types:)`` holds).
    func jsonScalar(_ access: FieldAccess, types: [String]) -> String
    /// How to read the value at `keys` inside the `json` field `access` reads (``JSONFieldPath``).
    func descend(_ access: FieldAccess, into keys: [String]) -> FieldAccess
    /// True when the text `expression` matches the `LIKE` pattern `placeholder`: `%` and `_`, ASCII letters in
    /// either case, no escape character.
    func like(_ expression: String, pattern placeholder: String) -> String
}

extension SQLDialect {
    /// The field's own scalar: an engine whose JSON values keep their SQL types needs no other.
    package func jsonScalar(_ access: FieldAccess, types: [String]) -> String { access.scalar }

    /// The plain placeholder: an engine that compares integers and reals exactly needs no conversion.
    package func placeholder(_ position: Int, for argument: SQLArgument) -> String { placeholder(position) }
}

/// SQLite's spelling, with its JSON1 functions (both the client's store and the server's embedded database).
package struct SQLiteDialect: SQLDialect {
    package init() {}

    package func jsonMember(_ field: String, of document: String) -> FieldAccess {
        FieldAccess(scalar: "json_extract(\(document), '$.\(field)')", jsonDocument: document, jsonPath: "$.\(field)")
    }

    package func placeholder(_ position: Int) -> String { "?" }
    package func instant(_ expression: String) -> String { "cairn_instant(\(expression))" }
    package var alwaysTrue: String { "1" }
    package var alwaysFalse: String { "0" }

    package func arrayContains(document: String, path: String, placeholder: String, types: [String]) -> String {
        "(json_type(\(document), '\(path)') = 'array' AND EXISTS (SELECT 1 FROM json_each(\(document), '\(path)') AS element WHERE element.value = \(placeholder) AND element.type IN (\(Self.list(types)))))"
    }

    package func jsonTypeIs(document: String, path: String, types: [String]) -> String {
        "json_type(\(document), '\(path)') IN (\(Self.list(types)))"
    }

    private static func list(_ types: [String]) -> String { types.map { "'\($0)'" }.joined(separator: ", ") }

    package func jsonQuote(_ expression: String) -> String { "json_quote(\(expression))" }

    package func descend(_ access: FieldAccess, into keys: [String]) -> FieldAccess {
        let path = access.jsonPath + keys.map { ".\($0)" }.joined()
        return FieldAccess(scalar: "json_extract(\(access.jsonDocument), '\(path)')", jsonDocument: access.jsonDocument, jsonPath: path)
    }

    /// SQLite's own `LIKE` has exactly these rules.
    package func like(_ expression: String, pattern placeholder: String) -> String { "(\(expression) LIKE \(placeholder))" }
}

extension SQLDialect where Self == SQLiteDialect {
    /// SQLite's spelling.
    package static var sqlite: SQLiteDialect { SQLiteDialect() }
}
