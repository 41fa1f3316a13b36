import CairnProtocol
import CairnSQL
import Foundation
import GRDB

extension LocalStore {
    /// A query compiled for its collection's table (and full-text index), inside a read.
    func compile(_ db: Database, _ query: Query) throws -> LocalQuerySQL {
        let table = try self.table(query.collection)
        return try LocalQuerySQL(
            query, table: table, fullTextFields: try localIndexes.fullTextFields(db, collection: table.name), tables: { try? self.table($0) })
    }

    func records(_ query: Query) throws -> [LocalRecord] {
        try writer.read { db in try records(db, query) }
    }

    /// The records a query selects, inside a read (or an observation's tracking).
    func records(_ db: Database, _ query: Query) throws -> [LocalRecord] {
        let compiled = try compile(db, query)
        return try LocalQuerySQL.fetchRecords(db, sql: compiled.recordsSQL, arguments: compiled.arguments)
    }

    func count(_ query: Query) throws -> Int {
        try writer.read { db in try count(db, query) }
    }

    /// How many records a query selects (within its limit and offset), inside a read.
    func count(_ db: Database, _ query: Query) throws -> Int {
        let compiled = try compile(db, query)
        return try Int.fetchOne(db, sql: compiled.countSQL, arguments: compiled.arguments) ?? 0
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
