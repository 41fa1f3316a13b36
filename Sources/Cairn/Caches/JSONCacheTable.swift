import CairnProtocol
import GRDB

/// The SQL of named JSON caches. `cairn_json_caches` lists each cache by scope and name with its declared fields and
/// the table that holds its entries: `cairn_cache_N`, with the entry's `id`, its whole JSON, and one typed column per
/// declared field.
struct JSONCacheTable: StoreTable {
    /// One cache as registered.
    struct Entry: Sendable, Hashable {
        var tableName: String
        var fields: [CacheField]
    }

    var tableNames: [String] { ["cairn_json_caches"] }

    /// Its part of migration v4.
    static func createV4(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_json_caches (
                number INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL, name TEXT NOT NULL, fields TEXT NOT NULL,
                UNIQUE (scope, name)
            )
            """)
    }

    /// Drops every cache's table and forgets the caches.
    func wipe(_ db: Database) throws {
        for name in try String.fetchAll(db, sql: "SELECT 'cairn_cache_' || number FROM cairn_json_caches") {
            try db.execute(sql: "DROP TABLE IF EXISTS \(CollectionTable.quote(name))")
        }
        try db.execute(sql: "DELETE FROM cairn_json_caches")
    }

    /// Opens the cache `name` of `scope`, creating it, or rebuilding its columns when `fields` differ from the stored ones.
    func open(_ db: Database, scope: String, name: String, fields: [CacheField]) throws -> Entry {
        let fieldsText = String(decoding: try CairnJSON.encode(fields), as: UTF8.self)
        if let row = try Row.fetchOne(db, sql: "SELECT number, fields FROM cairn_json_caches WHERE scope = ? AND name = ?", arguments: [scope, name]) {
            let entry = Entry(tableName: "cairn_cache_\(row[0] as Int64)", fields: fields)
            if (row[1] as String) != fieldsText {
                try rebuild(db, entry)
                try db.execute(sql: "UPDATE cairn_json_caches SET fields = ? WHERE number = ?", arguments: [fieldsText, row[0] as Int64])
            }
            return entry
        }
        try db.execute(sql: "INSERT INTO cairn_json_caches (scope, name, fields) VALUES (?, ?, ?)", arguments: [scope, name, fieldsText])
        let entry = Entry(tableName: "cairn_cache_\(db.lastInsertedRowID)", fields: fields)
        try create(db, entry)
        return entry
    }

    /// Creates a cache's table.
    private func create(_ db: Database, _ entry: Entry) throws {
        let columns = ["id TEXT PRIMARY KEY NOT NULL", "cairn_json TEXT NOT NULL"]
            + entry.fields.map { "\(CollectionTable.quote($0.name)) \(CollectionTable.sqlType($0.type))" }
        try db.execute(sql: "CREATE TABLE \(CollectionTable.quote(entry.tableName)) (\(columns.joined(separator: ", ")))")
    }

    /// Re-creates a cache's table with the columns of `entry.fields`, filled from the entries it holds.
    func rebuild(_ db: Database, _ entry: Entry) throws {
        let table = CollectionTable.quote(entry.tableName)
        let old = CollectionTable.quote(entry.tableName + "_old")
        try db.execute(sql: "ALTER TABLE \(table) RENAME TO \(old)")
        try create(db, entry)
        let insert = try db.makeStatement(sql: Statements(entry).upsert)
        let rows = try Row.fetchCursor(db, sql: "SELECT id, cairn_json FROM \(old)")
        while let row = try rows.next() {
            let text: String = row[1]
            let object = (try? JSONValue(parsing: Array(text.utf8)))?.objectValue ?? [:]
            try insert.execute(arguments: Statements.arguments(entry, id: row[0], text: text, object: object))
        }
        try db.execute(sql: "DROP TABLE \(old)")
    }

    /// The statements of one cache.
    struct Statements {
        let upsert: String
        let entry: String
        let remove: String
        let removeAll: String

        init(_ entry: Entry) {
            let table = CollectionTable.quote(entry.tableName)
            let columns = ["id", "cairn_json"] + entry.fields.map { CollectionTable.quote($0.name) }
            upsert = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", "))) "
                + "ON CONFLICT (id) DO UPDATE SET " + columns.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            self.entry = "SELECT cairn_json FROM \(table) WHERE id = ?"
            remove = "DELETE FROM \(table) WHERE id = ?"
            removeAll = "DELETE FROM \(table)"
        }

        /// The upsert's arguments for one entry.
        static func arguments(_ entry: Entry, id: String, text: String, object: [String: JSONValue]) -> StatementArguments {
            var values: [DatabaseValue] = [id.databaseValue, text.databaseValue]
            for field in entry.fields { values.append(field.columnValue(in: object).databaseValue) }
            return StatementArguments(values)
        }
    }
}
