import CairnProtocol
import CairnSQL
import Foundation
import GRDB

extension LocalStore {
    /// The SQL and arguments of a query over a collection's table.
    func compile(_ query: Query) throws -> (sql: String, arguments: StatementArguments) {
        let table = try self.table(query.collection)
        var sql = "SELECT id, cairn_data, cairn_version, cairn_pending, cairn_updated_at, cairn_updated_by FROM \(table.quotedName)"
        var arguments: [DatabaseValue] = []
        if let filter = query.filter {
            let compiled: CompiledFilter
            do {
                compiled = try FilterSQL.compile(filter, collection: table.schema, dialect: .sqlite, fieldExpression: table.fieldAccess)
            } catch {
                throw CairnError(wrapping: error)
            }
            sql += " WHERE \(compiled.sql)"
            arguments = compiled.arguments.map(\.databaseValue)
        }
        var order: [String] = []
        for key in query.sort {
            guard key.field == "id" || table.schema.field(named: key.field) != nil else {
                throw CairnError(.validationFailed, "cannot sort by \"\(key.field)\": not a field of \(query.collection)")
            }
            order.append("\(CollectionTable.quote(key.field)) \(key.ascending ? "ASC" : "DESC")")
        }
        order.append("id ASC")
        sql += " ORDER BY " + order.joined(separator: ", ")
        if let limit = query.limit {
            guard limit >= 0, (query.offset ?? 0) >= 0 else { throw CairnError.invalid("limit and offset cannot be negative") }
            sql += " LIMIT \(limit) OFFSET \(query.offset ?? 0)"
        }
        return (sql, StatementArguments(arguments))
    }

    static func fetchRecords(_ db: Database, sql: String, arguments: StatementArguments) throws -> [LocalRecord] {
        try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            VisibleRow(id: row[0], data: decodeObject(row[1]) ?? [:], version: row[2], pending: row[3], updatedAt: row[4], updatedBy: row[5]).record
        }
    }

    func records(_ query: Query) throws -> [LocalRecord] {
        let (sql, arguments) = try compile(query)
        return try writer.read { db in try Self.fetchRecords(db, sql: sql, arguments: arguments) }
    }

    func record(_ collection: String, id: String) throws -> LocalRecord? {
        let table = try self.table(collection)
        return try writer.read { db in try table.row(db, id: id)?.record }
    }

    /// Runs read-only SQL and returns its rows as JSON objects.
    func rows(sql: String, arguments: [JSONValue]) throws -> [[String: JSONValue]] {
        let bound = StatementArguments(arguments.map(\.databaseValue))
        return try writer.read { db in
            try Row.fetchAll(db, sql: sql, arguments: bound).map { row in
                var object: [String: JSONValue] = [:]
                for (column, value) in row { object[column] = JSONValue(databaseValue: value) }
                return object
            }
        }
    }
}

extension JSONValue {
    /// The SQL value of a JSON scalar; arrays and objects bind as JSON text.
    var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .bool(let bool): return (bool ? 1 : 0).databaseValue
        case .integer(let int): return int.databaseValue
        case .number(let double): return double.databaseValue
        case .string(let string): return string.databaseValue
        case .array, .object: return jsonText().databaseValue
        }
    }

    /// The JSON value of an SQL value (blobs as base64 strings).
    init(databaseValue: DatabaseValue) {
        switch databaseValue.storage {
        case .null: self = .null
        case .int64(let int): self = .integer(int)
        case .double(let double): self = .number(double)
        case .string(let string): self = .string(string)
        case .blob(let data): self = .string(data.base64EncodedString())
        }
    }
}
