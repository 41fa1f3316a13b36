/// The PostgreSQL table a collection lives in (``CollectionSchema/table``): `SCHEMA.NAME`, each part
/// `^[a-z_][a-z0-9_]{0,62}$`, so that both are plain SQL identifiers that need no quoting rules of their own.
///
/// ```swift
/// let table = try TableName(parsing: "erp.work_orders")   // schema "erp", name "work_orders"
/// ```
public struct TableName: Sendable, Hashable, CustomStringConvertible {
    /// The PostgreSQL schema (namespace), such as `public` or `erp`.
    public let schema: String
    /// The table's name inside it.
    public let name: String

    /// Schemas Cairn never puts a collection in: PostgreSQL's own.
    static let reservedSchemas: Set<String> = ["pg_catalog", "information_schema", "pg_toast"]

    /// Reads `SCHEMA.NAME`; `validation_failed` naming the field `table` when it is not one.
    public init(parsing text: String) throws(ErrorBody) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, parts.allSatisfy(Self.isIdentifier) else {
            throw .validation(
                "table \"\(text)\" must be SCHEMA.NAME, each part of lowercase letters, digits and _ (not starting with a digit)",
                field: "table")
        }
        guard !Self.reservedSchemas.contains(parts[0]), !parts[0].hasPrefix("pg_") else {
            throw .validation("table \"\(text)\" is in PostgreSQL's own schema \(parts[0])", field: "table")
        }
        schema = parts[0]
        name = parts[1]
    }

    /// `SCHEMA.NAME`, as written in a schema.
    public var description: String { "\(schema).\(name)" }

    /// The name quoted for SQL: `"erp"."work_orders"`.
    public var quoted: String { "\"\(schema)\".\"\(name)\"" }

    /// Whether `part` may be a schema's or a table's name: `^[a-z_][a-z0-9_]{0,62}$`.
    public static func isIdentifier(_ part: String) -> Bool {
        let utf8 = Array(part.utf8)
        guard (1...63).contains(utf8.count), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(utf8[0]) else { return false }
        return utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
    }
}
