import CairnProtocol

/// One field of a table collection as a column of its table: the field, and the column's PostgreSQL type as the
/// database names it (`format_type`), which decides how values cross between JSON and the column.
struct TableColumn: Sendable, Hashable {
    /// The field, whose name is the column's.
    let field: FieldSchema
    /// The column's type, as `format_type` writes it: `bigint`, `character varying(40)`, `timestamp with time zone`.
    let sqlType: String

    /// The column `SQL` makes for a field in a new table.
    init(field: FieldSchema) {
        self.init(field: field, sqlType: Self.naturalType(of: field.type))
    }

    /// A column of an existing table.
    init(field: FieldSchema, sqlType: String) {
        self.field = field
        self.sqlType = sqlType
    }

    /// The natural PostgreSQL type of a field type: `text`, `bigint`, `double precision`, `boolean`,
    /// `timestamp with time zone` or `jsonb`.
    static func naturalType(of type: FieldType) -> String {
        switch type {
        case .string, .file, .reference: return "text"
        case .integer: return "bigint"
        case .number: return "double precision"
        case .boolean: return "boolean"
        case .datetime: return "timestamp with time zone"
        case .json: return "jsonb"
        }
    }

    /// The column types an existing table may have for a field of `type`.
    static func acceptedTypes(for type: FieldType) -> Set<String> {
        switch type {
        case .string, .file, .reference: return ["text", "character varying", "character"]
        case .integer: return ["bigint", "integer", "smallint"]
        case .number: return ["double precision", "real", "numeric"]
        case .boolean: return ["boolean"]
        case .datetime: return ["timestamp with time zone"]
        case .json: return ["jsonb", "json"]
        }
    }

    /// Whether a column of type `sqlType` can hold the field (its length or precision aside).
    static func fits(_ sqlType: String, _ type: FieldType) -> Bool {
        acceptedTypes(for: type).contains(baseType(sqlType))
    }

    /// The type without its modifiers: `character varying(40)` is `character varying`, `timestamp(3) with time zone`
    /// is `timestamp with time zone`.
    static func baseType(_ sqlType: String) -> String {
        sqlType.replacing(/\([0-9, ]*\)/, with: "")
    }

    /// The quoted column name.
    var quoted: String { "\"\(field.name)\"" }

    /// The column's value read from the JSON object `document` (a `jsonb` expression), ready to store: JSON null and
    /// an absent member are SQL NULL.
    func value(from document: String) -> String {
        let member = "nullif(\(document) -> '\(field.name)', 'null'::jsonb)"
        switch field.type {
        case .string, .file, .reference: return "(\(document) ->> '\(field.name)')"
        case .integer, .number: return "(\(member))::numeric::\(sqlType)"
        case .boolean: return "(\(member))::boolean"
        case .datetime: return "(\(document) ->> '\(field.name)')::timestamptz"
        case .json: return Self.baseType(sqlType) == "json" ? "(\(member))::json" : member
        }
    }

    /// The column of row `row` as a JSON value (`jsonb`): a date-time in UTC with microseconds, whatever the session's
    /// time zone; SQL NULL as JSON null.
    func json(of row: String) -> String {
        let column = "\(row).\(quoted)"
        switch field.type {
        case .datetime:
            return "coalesce(to_jsonb(to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')), 'null'::jsonb)"
        default:
            return "coalesce(to_jsonb(\(column)), 'null'::jsonb)"
        }
    }

    /// True when the column differs between rows `old` and `new` (`json` has no equality: compared as text).
    func changed(from old: String, to new: String) -> String {
        if Self.baseType(sqlType) == "json" { return "\(old).\(quoted)::text IS DISTINCT FROM \(new).\(quoted)::text" }
        return "\(old).\(quoted) IS DISTINCT FROM \(new).\(quoted)"
    }
}
