import CairnProtocol
import Foundation
import GRDB

/// The SQL of one collection's local table: a column per schema field, plus the full record JSON and sync metadata.
///
/// | column | holds |
/// | --- | --- |
/// | `id` | the record id |
/// | one per field | strings, datetimes and file ids as TEXT, integers, numbers, booleans (1/0), json fields as JSON text |
/// | `cairn_data` | the record's whole data as JSON |
/// | `cairn_version` | the server version the row is based on (0 if never on the server) |
/// | `cairn_pending` | 1 while local changes wait for upload |
/// | `cairn_updated_at`, `cairn_updated_by` | from the server's last state |
struct CollectionTable: Sendable {
    let schema: CollectionSchema

    var name: String { schema.name }
    var quotedName: String { Self.quote(schema.name) }

    static func quote(_ identifier: String) -> String { "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    static func sqlType(_ type: FieldType) -> String {
        switch type {
        case .string, .datetime, .json, .file: return "TEXT"
        case .integer, .boolean: return "INTEGER"
        case .number: return "REAL"
        }
    }

    var createSQL: String {
        let fields = schema.fields.map { "\(Self.quote($0.name)) \(Self.sqlType($0.type))" }
        let columns = ["id TEXT PRIMARY KEY NOT NULL"] + fields + [
            "cairn_data TEXT NOT NULL", "cairn_version INTEGER NOT NULL DEFAULT 0", "cairn_pending INTEGER NOT NULL DEFAULT 0",
            "cairn_updated_at TEXT", "cairn_updated_by TEXT",
        ]
        return "CREATE TABLE IF NOT EXISTS \(quotedName) (\(columns.joined(separator: ", ")))"
    }

    var indexSQL: [String] {
        schema.indexes.map { fields in
            let indexName = "cairn_index_\(name)_" + fields.joined(separator: "_")
            return "CREATE INDEX IF NOT EXISTS \(Self.quote(indexName)) ON \(quotedName) (\(fields.map(Self.quote).joined(separator: ", ")))"
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

    /// How filters read a field from its column.
    func fieldAccess(_ field: FieldSchema) -> FieldAccess {
        let column = Self.quote(field.name)
        if field.type == .json {
            return FieldAccess(scalar: "json_extract(\(column), '$')", jsonDocument: column, jsonPath: "$")
        }
        return FieldAccess(scalar: column, jsonDocument: "json_quote(\(column))", jsonPath: "$")
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

    /// The column values of a pulled change's scanned fields (json fields arrive as their JSON text).
    func columnValues(scanned fields: [JSONValue?]) -> [DatabaseValue] {
        zip(schema.fields, fields).map { field, value in
            guard let value else { return .null }
            switch value {
            case .string(let text): return text.databaseValue
            case .integer(let int): return int.databaseValue
            case .number(let double): return double.databaseValue
            case .bool(let bool): return (bool ? 1 : 0).databaseValue
            default: return field.type == .json ? value.jsonText().databaseValue : .null
            }
        }
    }

    /// Upserts a pulled record unless the row already holds a newer version: id, fields, data, version, updatedAt, updatedBy.
    var pulledUpsertSQL: String {
        let columns = ["id"] + schema.fields.map { Self.quote($0.name) } + ["cairn_data", "cairn_version", "cairn_updated_at", "cairn_updated_by"]
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let updates = (columns.dropFirst() + ["cairn_pending"]).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return "INSERT INTO \(quotedName) (\(columns.joined(separator: ", ")), cairn_pending) VALUES (\(placeholders), 0) "
            + "ON CONFLICT (id) DO UPDATE SET \(updates) WHERE excluded.cairn_version >= \(quotedName).cairn_version"
    }

    /// Writes the visible row of a record.
    func upsert(_ db: Database, id: String, data: [String: JSONValue], version: Int64, pending: Bool, updatedAt: String?, updatedBy: String?) throws {
        let columns = ["id"] + schema.fields.map { Self.quote($0.name) } + ["cairn_data", "cairn_version", "cairn_pending", "cairn_updated_at", "cairn_updated_by"]
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let updates = columns.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        let sql = "INSERT INTO \(quotedName) (\(columns.joined(separator: ", "))) VALUES (\(placeholders)) ON CONFLICT (id) DO UPDATE SET \(updates)"
        var arguments: [DatabaseValue] = [id.databaseValue]
        arguments += columnValues(data)
        arguments += [JSONValue.object(data).jsonText().databaseValue, version.databaseValue, (pending ? 1 : 0).databaseValue,
                      updatedAt.databaseValue, updatedBy.databaseValue]
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments))
    }

    /// Removes the visible row of a record.
    func remove(_ db: Database, id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM \(quotedName) WHERE id = ?").execute(arguments: [id])
    }

    /// The visible row of a record, if any.
    func row(_ db: Database, id: String) throws -> VisibleRow? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT cairn_data, cairn_version, cairn_pending, cairn_updated_at, cairn_updated_by FROM \(quotedName) WHERE id = ?"),
            arguments: [id]
        ).map { row in
            let text: String = row[0]
            return VisibleRow(
                id: id, data: (try? JSONValue(parsing: text).objectValue) ?? [:], version: row[1], pending: row[2],
                updatedAt: row[3], updatedBy: row[4])
        }
    }
}

/// A record as the local table shows it.
struct VisibleRow: Sendable {
    var id: String
    var data: [String: JSONValue]
    var version: Int64
    var pending: Bool
    var updatedAt: String?
    var updatedBy: String?

    var record: LocalRecord {
        LocalRecord(id: id, data: data, version: version, hasPendingChanges: pending,
                    updatedAt: updatedAt.flatMap(RFC3339.date(from:)), updatedBy: updatedBy)
    }
}

/// A record as the app reads it: its current local state.
public struct LocalRecord: Sendable, Hashable, Identifiable {
    /// The record's id.
    public var id: String
    /// Its data, local changes included.
    public var data: [String: JSONValue]
    /// The server version the local state is based on (0 for a record never uploaded).
    public var version: Int64
    /// True while local changes to this record wait for upload.
    public var hasPendingChanges: Bool
    /// When the server last committed it.
    public var updatedAt: Date?
    /// Who last committed it on the server.
    public var updatedBy: String?
}
