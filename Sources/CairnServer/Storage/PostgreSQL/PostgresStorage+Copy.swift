import CairnProtocol
import PostgresNIO

extension PostgresStorage {
    /// Tables of the database that ``StorageTable/all`` leaves out, and why.
    static let tablesNotCopied: [String: String] = [
        "cairn_migrations": "the migrations' own record of what they applied",
        "file_chunks": "files' bytes, which a copy moves through the BlobStore protocol",
        "login_failures": "recent failed sign-ins, which other backends keep in each server's memory",
        "table_collections": "collections kept in PostgreSQL tables, which only PostgreSQL has (its schema remakes them)",
    ]

    /// Reads a page in primary-key order.
    public func exportRows(of table: StorageTable, after: StorageRow?, limit: Int) async throws -> [StorageRow] {
        let names = table.columns.map { "\"\($0.name)\"" }
        let keys = names.prefix(table.keyCount).joined(separator: ", ")
        var binds = PostgresBindings()
        var sql = "SELECT \(names.joined(separator: ", ")) FROM \(table.name)"
        if let after {
            for value in after { binds.append(value) }
            sql += " WHERE (\(keys)) > (\((1...max(1, after.count)).map { "$\($0)" }.joined(separator: ", ")))"
        }
        sql += " ORDER BY \(keys) LIMIT \(max(0, limit))"
        var rows: [StorageRow] = []
        for try await row in try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
            let cells = row.makeRandomAccess()
            rows.append(try table.columns.indices.map { index in try StorageValue(cells[index], kind: table.columns[index].kind) })
        }
        return rows
    }

    /// Upserts the rows in one statement (the caller keeps a page under PostgreSQL's 65,535 parameters).
    public func importRows(_ rows: [StorageRow], into table: StorageTable) async throws {
        guard !rows.isEmpty else { return }
        let names = table.columns.map { "\"\($0.name)\"" }
        var binds = PostgresBindings(capacity: rows.count * names.count)
        var tuples: [String] = []
        for row in rows {
            var placeholders: [String] = []
            for value in row {
                binds.append(value)
                placeholders.append("$\(binds.count)")
            }
            tuples.append("(" + placeholders.joined(separator: ", ") + ")")
        }
        let updates = names.dropFirst(table.keyCount).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        let sql = """
            INSERT INTO \(table.name) (\(names.joined(separator: ", "))) VALUES \(tuples.joined(separator: ", "))
            ON CONFLICT (\(names.prefix(table.keyCount).joined(separator: ", "))) DO \(updates.isEmpty ? "NOTHING" : "UPDATE SET \(updates)")
            """
        try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
    }
}

extension PostgresBindings {
    /// Binds a portable value in PostgreSQL's type for its kind.
    fileprivate mutating func append(_ value: StorageValue) {
        switch value {
        case .null: appendNull()
        case .text(let text): append(text)
        case .integer(let integer): append(integer)
        case .real(let real): append(real)
        case .boolean(let boolean): append(boolean)
        }
    }
}

extension StorageValue {
    /// A value of `kind` read from a PostgreSQL cell.
    fileprivate init(_ cell: PostgresCell, kind: Kind) throws {
        let value: StorageValue? =
            switch kind {
            case .text: try cell.decode(String?.self).map(StorageValue.text)
            case .integer: try cell.decode(Int64?.self).map(StorageValue.integer)
            case .real: try cell.decode(Double?.self).map(StorageValue.real)
            case .boolean: try cell.decode(Bool?.self).map(StorageValue.boolean)
            }
        self = value ?? .null
    }
}
