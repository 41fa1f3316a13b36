import CairnProtocol
import GRDB

extension SQLiteStorage {
    /// Tables of the database that ``StorageTable/all`` leaves out, and why.
    static let tablesNotCopied: [String: String] = ["grdb_migrations": "the migrator's own record of what it applied"]

    /// Reads a page in key order (the primary key, or the unique index that stands for it).
    public func exportRows(of table: StorageTable, after: StorageRow?, limit: Int) async throws -> [StorageRow] {
        let names = table.columns.map { "\"\($0.name)\"" }
        let keys = names.prefix(table.keyCount).joined(separator: ", ")
        var sql = "SELECT \(names.joined(separator: ", ")) FROM \(table.name)"
        var arguments = StatementArguments()
        if let after {
            sql += " WHERE (\(keys)) > (\(Array(repeating: "?", count: after.count).joined(separator: ", ")))"
            arguments = StatementArguments(after.map(\.databaseValue))
        }
        sql += " ORDER BY \(keys) LIMIT \(max(0, limit))"
        return try await pool.read { [sql, arguments] db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                try table.columns.indices.map { index in try StorageValue(row[index], kind: table.columns[index].kind, table: table) }
            }
        }
    }

    /// Upserts the rows in one write transaction.
    public func importRows(_ rows: [StorageRow], into table: StorageTable) async throws {
        guard !rows.isEmpty else { return }
        let names = table.columns.map { "\"\($0.name)\"" }
        let updates = names.dropFirst(table.keyCount).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        let sql = """
            INSERT INTO \(table.name) (\(names.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))
            ON CONFLICT (\(names.prefix(table.keyCount).joined(separator: ", "))) DO \(updates.isEmpty ? "NOTHING" : "UPDATE SET \(updates)")
            """
        try await write { db in
            let statement = try db.makeStatement(sql: sql)
            for row in rows { try statement.execute(arguments: StatementArguments(row.map(\.databaseValue))) }
        }
    }
}

extension StorageValue {
    /// The value as SQLite keeps it (booleans as 0 and 1).
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .text(let text): text.databaseValue
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .boolean(let value): (value ? 1 : 0).databaseValue
        }
    }

    /// A value of `kind` read from SQLite; throws `internal_error` when the stored value is not of that kind.
    init(_ value: DatabaseValue, kind: Kind, table: StorageTable) throws {
        // A plain switch over the stored value: the same through GRDB's optional conversions crashed the optimizer
        // (Swift 6.3.1, -O: an ownership verification failure in copy propagation).
        switch (kind, value.storage) {
        case (_, .null): self = .null
        case (.text, .string(let text)): self = .text(text)
        case (.integer, .int64(let number)): self = .integer(number)
        case (.integer, .double(let number)) where Int64(exactly: number) != nil: self = .integer(Int64(number))
        case (.real, .double(let number)): self = .real(number)
        case (.real, .int64(let number)): self = .real(Double(number))
        case (.boolean, .int64(let number)): self = .boolean(number != 0)
        default:
            throw ErrorBody(code: .internalError, message: "a value of \(table.name) is not of its column's kind (\(kind))")
        }
    }
}
