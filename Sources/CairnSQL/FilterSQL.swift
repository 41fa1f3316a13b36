import CairnProtocol

/// Compiles ``Filter``s to parameterised SQL with PROTOCOL.md's semantics, after checking them against a
/// collection's schema (only declared fields and `id` can be filtered, and values must fit the field type).
///
/// The semantics live here once; the ``SQLDialect`` spells them for one engine, and the caller says how to read a
/// field: the server reads it out of the record's JSON, a local store from its typed column.
///
/// ```swift
/// let compiled = try FilterSQL.compile(filter, collection: notes, dialect: .sqlite) { field in
///     SQLiteDialect().jsonMember(field.name, of: "data")
/// }
/// ```
package struct FilterSQL<Dialect: SQLDialect> {
    /// Most levels of nested `and`/`or`.
    package static var maximumDepth: Int { 32 }
    /// Most values of one `in`.
    package static var maximumInValues: Int { 1000 }

    let dialect: Dialect
    let collection: CollectionSchema
    let idExpression: String
    let fieldExpression: (FieldSchema) -> FieldAccess
    /// Reads a dotted name that is not a declared field (a field of a referenced record, `site.region`), or `nil` to
    /// read it as a path inside a `json` field.
    let pathExpression: ((String) throws(ErrorBody) -> (FieldSchema, FieldAccess)?)?
    let firstPosition: Int
    var arguments: [SQLArgument] = []

    /// Compiles `filter`; throws `validation_failed` naming the offending field.
    /// - Parameters:
    ///   - idExpression: the SQL expression that reads the record id.
    ///   - firstPlaceholder: the position of the filter's first placeholder in the whole statement (1-based).
    ///   - fieldExpression: the SQL expression that reads a declared field (never called for `id`).
    ///   - pathExpression: how to read a dotted name that is no declared field before it is read as a path inside a
    ///     `json` field: the local store follows `reference` fields with it (`site.region`).
    package static func compile(
        _ filter: Filter, collection: CollectionSchema, dialect: Dialect, idExpression: String = "id", firstPlaceholder: Int = 1,
        fieldExpression: @escaping (FieldSchema) -> FieldAccess,
        pathExpression: ((String) throws(ErrorBody) -> (FieldSchema, FieldAccess)?)? = nil
    ) throws(ErrorBody) -> CompiledFilter {
        var compiler = FilterSQL(
            dialect: dialect, collection: collection, idExpression: idExpression, fieldExpression: fieldExpression,
            pathExpression: pathExpression, firstPosition: firstPlaceholder)
        let sql = try compiler.compile(filter, depth: 0)
        return CompiledFilter(sql: sql, arguments: compiler.arguments)
    }

    private mutating func compile(_ filter: Filter, depth: Int) throws(ErrorBody) -> String {
        guard depth < Self.maximumDepth else { throw .validation("filter is nested deeper than \(Self.maximumDepth) levels", field: "where") }
        switch filter {
        case .and(let filters):
            if filters.isEmpty { return dialect.alwaysTrue }
            var parts: [String] = []
            for child in filters { parts.append(try compile(child, depth: depth + 1)) }
            return "(" + parts.joined(separator: " AND ") + ")"
        case .or(let filters):
            if filters.isEmpty { return dialect.alwaysFalse }
            var parts: [String] = []
            for child in filters { parts.append(try compile(child, depth: depth + 1)) }
            return "(" + parts.joined(separator: " OR ") + ")"
        case .not(let inner):
            // A condition on a null or missing field is NULL in SQL, and does not match: its `not` does.
            return "(NOT COALESCE(\(try compile(inner, depth: depth + 1)), \(dialect.alwaysFalse)))"
        case .condition(let name, let op, let value):
            let field: FieldSchema
            let access: FieldAccess
            if name == "id" {
                field = FieldSchema(name: "id", type: .string)
                access = FieldAccess(scalar: idExpression, jsonDocument: dialect.jsonQuote(idExpression), jsonPath: "$")
            } else if let declared = collection.field(named: name) {
                field = declared
                access = fieldExpression(declared)
            } else if name.contains("."), let resolved = try pathExpression?(name) {
                (field, access) = resolved
            } else if let path = try JSONFieldPath(name, in: collection) {
                field = path.asField
                access = dialect.descend(fieldExpression(path.field), into: path.keys)
            } else {
                throw .validation("\"\(name)\" is not a field of \(collection.name); only schema fields, paths inside json fields and id can be filtered", field: name)
            }
            return try condition(field, access, op, value)
        }
    }

    /// Binds `argument` and returns its placeholder.
    private mutating func bind(_ argument: SQLArgument) -> String {
        arguments.append(argument)
        return dialect.placeholder(firstPosition + arguments.count - 1, for: argument)
    }

    private mutating func condition(_ field: FieldSchema, _ access: FieldAccess, _ op: FilterOperator, _ value: JSONValue) throws(ErrorBody) -> String {
        let column = access.scalar
        switch op {
        case .exists:
            guard case .bool(let present) = value else { throw .validation("exists takes true or false", field: field.name) }
            return present ? "(\(column) IS NOT NULL)" : "(\(column) IS NULL)"
        case .eq, .ne:
            if value.isNull { return op == .eq ? "(\(column) IS NULL)" : "(\(column) IS NOT NULL)" }
            let equal = try comparison(field, access, "=", value)
            return op == .eq ? equal : "(NOT COALESCE(\(equal), \(dialect.alwaysFalse)))"
        case .lt, .lte, .gt, .gte:
            guard field.type != .boolean else { throw .validation("booleans support eq, ne and in only", field: field.name) }
            guard !value.isNull else { throw .validation("\(op.rawValue) needs a non-null value", field: field.name) }
            let symbol = [FilterOperator.lt: "<", .lte: "<=", .gt: ">", .gte: ">="][op]!
            return try comparison(field, access, symbol, value)
        case .in:
            guard case .array(let values) = value else { throw .validation("in takes an array of values", field: field.name) }
            guard values.count <= Self.maximumInValues else { throw .validation("in takes at most \(Self.maximumInValues) values", field: field.name) }
            if values.isEmpty { return dialect.alwaysFalse }
            var parts: [String] = []
            for element in values {
                parts.append(element.isNull ? "\(column) IS NULL" : try comparison(field, access, "=", element))
            }
            return "(" + parts.joined(separator: " OR ") + ")"
        case .like:
            guard [.string, .file, .reference].contains(field.type) else { throw .validation("like works on string fields only", field: field.name) }
            guard case .string(let pattern) = value else { throw .validation("like takes a string pattern", field: field.name) }
            try Self.checkText(pattern, field)
            return dialect.like(column, pattern: bind(.text(pattern)))
        case .contains:
            guard field.type == .json else { throw .validation("contains works on json (array) fields only", field: field.name) }
            guard let argument = Self.scalarArgument(value), let types = Self.jsonTypes(value) else {
                throw .validation("contains takes a string, number or boolean", field: field.name)
            }
            if case .string(let text) = value { try Self.checkText(text, field) }
            return dialect.arrayContains(document: access.jsonDocument, path: access.jsonPath, placeholder: bind(argument), types: types)
        }
    }

    /// A field compared with a non-null value by `symbol` (`=`, `<`, ...), both sides normalised for the field's
    /// type. In a `json` field only values of the same JSON kind compare: `true` is not `1`, and `"[1]"` is not `[1]`.
    private mutating func comparison(_ field: FieldSchema, _ access: FieldAccess, _ symbol: String, _ value: JSONValue) throws(ErrorBody) -> String {
        let column = access.scalar
        switch field.type {
        case .string, .file, .reference:
            guard case .string(let text) = value else { throw Self.mismatch(field, value) }
            try Self.checkText(text, field)
            return "(\(column) \(symbol) \(bind(.text(text))))"
        case .integer, .number:
            switch value {
            case .integer(let int): return "(\(column) \(symbol) \(bind(.integer(int))))"
            case .number(let double): return "(\(column) \(symbol) \(bind(.real(double))))"
            default: throw Self.mismatch(field, value)
            }
        case .boolean:
            guard case .bool(let bool) = value else { throw Self.mismatch(field, value) }
            return "(\(column) \(symbol) \(bind(.integer(bool ? 1 : 0))))"
        case .datetime:
            guard case .string(let text) = value, RFC3339.isValid(text) else { throw Self.mismatch(field, value) }
            return "(\(dialect.instant(column)) \(symbol) \(dialect.instant(bind(.text(text)))))"
        case .json:
            guard let argument = Self.scalarArgument(value), let types = Self.jsonTypes(value) else { throw Self.mismatch(field, value) }
            if case .string(let text) = value { try Self.checkText(text, field) }
            let kind = dialect.jsonTypeIs(document: access.jsonDocument, path: access.jsonPath, types: types)
            return "(\(kind) AND \(dialect.jsonScalar(access, types: types)) \(symbol) \(bind(argument)))"
        }
    }

    /// The JSON kinds a scalar value equals: numbers equal numbers, booleans booleans, strings strings.
    private static func jsonTypes(_ value: JSONValue) -> [String]? {
        switch value {
        case .string: return ["text"]
        case .integer, .number: return ["integer", "real"]
        case .bool: return ["true", "false"]
        default: return nil
        }
    }

    /// Text holding U+0000 cannot be compared (records cannot hold it either).
    private static func checkText(_ text: String, _ field: FieldSchema) throws(ErrorBody) {
        if text.utf8.contains(0) { throw .validation("strings cannot hold U+0000", field: field.name) }
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
