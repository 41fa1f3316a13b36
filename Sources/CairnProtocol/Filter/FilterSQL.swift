/// A value bound to a `?` placeholder of compiled SQL.
public enum SQLArgument: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// How compiled SQL reads one field: as an SQL scalar (strings, numbers, 1/0 for booleans, JSON text for
/// arrays and objects), and as a JSON document plus path for `contains`.
public struct FieldAccess: Sendable, Hashable {
    /// An expression giving the field's SQL value, `NULL` when absent.
    public var scalar: String
    /// An expression giving JSON text that holds the field.
    public var jsonDocument: String
    /// The JSON path of the field inside `jsonDocument`, such as `$.tags` or `$`.
    public var jsonPath: String

    public init(scalar: String, jsonDocument: String, jsonPath: String) {
        self.scalar = scalar
        self.jsonDocument = jsonDocument
        self.jsonPath = jsonPath
    }

    /// A field kept inside a JSON column: `json_extract(document, '$.field')`.
    public static func jsonMember(_ field: String, of document: String) -> FieldAccess {
        FieldAccess(scalar: "json_extract(\(document), '$.\(field)')", jsonDocument: document, jsonPath: "$.\(field)")
    }
}

/// A filter compiled to a parameterised SQLite expression: values are never spliced into the SQL text.
public struct CompiledFilter: Sendable, Hashable {
    /// The boolean SQL expression, with `?` placeholders.
    public var sql: String
    /// The values for the placeholders, in order.
    public var arguments: [SQLArgument]
}

/// Compiles ``Filter``s to SQLite expressions with PROTOCOL.md's semantics, after checking them against a
/// collection's schema (only declared fields and `id` can be filtered, and values must fit the field type).
///
/// The caller says how to read a field: the server reads it out of the record's JSON, a local store from
/// its typed column.
///
/// ```swift
/// let compiled = try FilterSQL.compile(filter, collection: notes) { field in .jsonMember(field.name, of: "data") }
/// ```
public enum FilterSQL {
    /// Compiles `filter`; throws `validation_failed` naming the offending field.
    /// - Parameter fieldExpression: the SQL expression that reads a declared field (never called for `id`).
    public static func compile(
        _ filter: Filter, collection: CollectionSchema, idExpression: String = "id",
        fieldExpression: (FieldSchema) -> FieldAccess
    ) throws(ErrorBody) -> CompiledFilter {
        var arguments: [SQLArgument] = []
        let sql = try compile(filter, collection, idExpression, fieldExpression, &arguments, depth: 0)
        return CompiledFilter(sql: sql, arguments: arguments)
    }

    static let maximumDepth = 32
    static let maximumInValues = 1000

    private static func compile(
        _ filter: Filter, _ collection: CollectionSchema, _ idExpression: String,
        _ fieldExpression: (FieldSchema) -> FieldAccess, _ arguments: inout [SQLArgument], depth: Int
    ) throws(ErrorBody) -> String {
        guard depth < maximumDepth else { throw .validation("filter is nested deeper than \(maximumDepth) levels", field: "where") }
        switch filter {
        case .and(let filters):
            if filters.isEmpty { return "1" }
            var parts: [String] = []
            for child in filters { parts.append(try compile(child, collection, idExpression, fieldExpression, &arguments, depth: depth + 1)) }
            return "(" + parts.joined(separator: " AND ") + ")"
        case .or(let filters):
            if filters.isEmpty { return "0" }
            var parts: [String] = []
            for child in filters { parts.append(try compile(child, collection, idExpression, fieldExpression, &arguments, depth: depth + 1)) }
            return "(" + parts.joined(separator: " OR ") + ")"
        case .condition(let name, let op, let value):
            let field: FieldSchema
            let expression: FieldAccess
            if name == "id" {
                field = FieldSchema(name: "id", type: .string)
                expression = FieldAccess(scalar: idExpression, jsonDocument: "json_quote(\(idExpression))", jsonPath: "$")
            } else if let declared = collection.field(named: name) {
                field = declared
                expression = fieldExpression(declared)
            } else {
                throw .validation("\"\(name)\" is not a field of \(collection.name); only schema fields and id can be filtered", field: name)
            }
            return try condition(field, expression, op, value, &arguments)
        }
    }

    private static func condition(
        _ field: FieldSchema, _ access: FieldAccess, _ op: FilterOperator, _ value: JSONValue, _ arguments: inout [SQLArgument]
    ) throws(ErrorBody) -> String {
        let column = access.scalar
        switch op {
        case .exists:
            guard case .bool(let present) = value else { throw .validation("exists takes true or false", field: field.name) }
            return present ? "(\(column) IS NOT NULL)" : "(\(column) IS NULL)"
        case .eq, .ne:
            if value.isNull { return op == .eq ? "(\(column) IS NULL)" : "(\(column) IS NOT NULL)" }
            let (left, right) = try comparable(field, column, value, &arguments)
            return op == .eq ? "(\(left) = \(right))" : "(\(left) IS NULL OR \(left) <> \(right))"
        case .lt, .lte, .gt, .gte:
            guard field.type != .boolean else { throw .validation("booleans support eq, ne and in only", field: field.name) }
            guard !value.isNull else { throw .validation("\(op.rawValue) needs a non-null value", field: field.name) }
            let (left, right) = try comparable(field, column, value, &arguments)
            let symbol = [FilterOperator.lt: "<", .lte: "<=", .gt: ">", .gte: ">="][op]!
            return "(\(left) \(symbol) \(right))"
        case .in:
            guard case .array(let values) = value else { throw .validation("in takes an array of values", field: field.name) }
            guard values.count <= maximumInValues else { throw .validation("in takes at most \(maximumInValues) values", field: field.name) }
            if values.isEmpty { return "0" }
            var parts: [String] = []
            for element in values {
                if element.isNull {
                    parts.append("\(column) IS NULL")
                } else {
                    let (left, right) = try comparable(field, column, element, &arguments)
                    parts.append("\(left) = \(right)")
                }
            }
            return "(" + parts.joined(separator: " OR ") + ")"
        case .like:
            guard field.type == .string || field.type == .file else { throw .validation("like works on string fields only", field: field.name) }
            guard case .string(let pattern) = value else { throw .validation("like takes a string pattern", field: field.name) }
            arguments.append(.text(pattern))
            return "(\(column) LIKE ?)"
        case .contains:
            guard field.type == .json else { throw .validation("contains works on json (array) fields only", field: field.name) }
            guard let argument = scalarArgument(value) else { throw .validation("contains takes a string, number or boolean", field: field.name) }
            arguments.append(argument)
            let document = access.jsonDocument, path = access.jsonPath
            return "(json_type(\(document), '\(path)') = 'array' AND EXISTS (SELECT 1 FROM json_each(\(document), '\(path)') AS element WHERE element.value = ? AND element.type NOT IN ('object', 'array')))"
        }
    }

    /// The SQL for a field and a non-null value compared with `=`, `<`, ...: both sides normalised for the type.
    private static func comparable(
        _ field: FieldSchema, _ column: String, _ value: JSONValue, _ arguments: inout [SQLArgument]
    ) throws(ErrorBody) -> (String, String) {
        switch field.type {
        case .string, .file:
            guard case .string(let text) = value else { throw mismatch(field, value) }
            arguments.append(.text(text))
            return (column, "?")
        case .integer, .number:
            switch value {
            case .integer(let int): arguments.append(.integer(int))
            case .number(let double): arguments.append(.real(double))
            default: throw mismatch(field, value)
            }
            return (column, "?")
        case .boolean:
            guard case .bool(let bool) = value else { throw mismatch(field, value) }
            arguments.append(.integer(bool ? 1 : 0))
            return (column, "?")
        case .datetime:
            guard case .string(let text) = value, RFC3339.isValid(text) else { throw mismatch(field, value) }
            arguments.append(.text(text))
            return ("julianday(\(column))", "julianday(?)")
        case .json:
            guard let argument = scalarArgument(value) else { throw mismatch(field, value) }
            arguments.append(argument)
            return (column, "?")
        }
    }

    private static func scalarArgument(_ value: JSONValue) -> SQLArgument? {
        switch value {
        case .string(let text): return .text(text)
        case .integer(let int): return .integer(int)
        case .number(let double): return .real(double)
        case .bool(let bool): return .integer(bool ? 1 : 0)
        default: return nil
        }
    }

    private static func mismatch(_ field: FieldSchema, _ value: JSONValue) -> ErrorBody {
        .validation("field \"\(field.name)\" is \(field.type.rawValue): \(value.kindName) does not fit", field: field.name)
    }
}
