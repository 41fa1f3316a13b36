import CairnProtocol
import CairnSQL
import GRDB

extension CollectionTable {
    /// An SQL identifier in double quotes.
    static func quote(_ identifier: String) -> String { "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// The column type of a field type.
    static func sqlType(_ type: FieldType) -> String {
        switch type {
        case .string, .datetime, .json, .file, .reference: return "TEXT"
        case .integer, .boolean: return "INTEGER"
        case .number: return "REAL"
        }
    }

    /// The SQL expression reading `field` out of JSON `document` at `path` (e.g. `$.data` of a change), typed for its column.
    static func extract(_ field: FieldSchema, document: String, path: String) -> String {
        let member = "\(path).\(field.name)"
        switch field.type {
        case .json: return "NULLIF(\(document) -> '\(member)', 'null')"
        default: return "(\(document) ->> '\(member)')"
        }
    }

    /// How filters read a field from its column (of the table aliased `qualifier`, if given).
    func fieldAccess(_ field: FieldSchema, qualifier: String? = nil) -> FieldAccess {
        let column = (qualifier.map { "\($0)." } ?? "") + Self.quote(field.name)
        if field.type == .json {
            return FieldAccess(scalar: "json_extract(\(column), '$')", jsonDocument: column, jsonPath: "$")
        }
        return FieldAccess(scalar: column, jsonDocument: "json_quote(\(column))", jsonPath: "$")
    }

    /// The SQL expression that sorts and indexes read for `name` (of the table aliased `qualifier`, if given): `id`, a
    /// field's column, or the value at a path inside a `json` field (``JSONFieldPath``, `address.city`), spelled the
    /// same for a query and an index so that SQLite uses the one for the other. Nil for a name the schema lacks.
    /// - Throws: `validation_failed` for a malformed path.
    func readExpression(_ name: String, qualifier: String? = nil) throws -> String? {
        let prefix = qualifier.map { "\($0)." } ?? ""
        if name == "id" || schema.field(named: name) != nil { return prefix + Self.quote(name) }
        do {
            guard let path = try JSONFieldPath(name, in: schema) else { return nil }
            return SQLiteDialect().descend(fieldAccess(path.field, qualifier: qualifier), into: path.keys).scalar
        } catch {
            throw CairnError(wrapping: error)
        }
    }

    /// The column values of a record's data, in `schema.fields` order.
    func columnValues(_ data: [String: JSONValue]) -> [DatabaseValue] {
        schema.fields.map { field in
            guard let value = data[field.name], !value.isNull else { return .null }
            switch (field.type, value) {
            case (.json, _): return value.jsonText().databaseValue
            case (_, .string(let text)): return text.databaseValue
            case (_, .integer(let int)): return int.databaseValue
            case (_, .number(let double)): return double.databaseValue
            case (_, .bool(let bool)): return (bool ? 1 : 0).databaseValue
            default: return value.jsonText().databaseValue
            }
        }
    }

    /// Binds a pulled change's scanned fields to the next placeholders, in `schema.fields` order: text straight from
    /// the page's `bytes` (json fields as their JSON text).
    func bindColumns(_ values: [ScannedValue], of bytes: UnsafeBufferPointer<UInt8>, to row: inout BoundStatement.Row) {
        for value in values {
            switch value {
            case .absent: row.bindNull()
            case .integer(let int): row.bind(int)
            case .number(let double): row.bind(double)
            case .bool(let bool): row.bind(bool)
            case .bytes(let range): row.bind(UnsafeBufferPointer(rebasing: bytes[range]))
            case .text(let text): row.bind(text)
            }
        }
    }
}
