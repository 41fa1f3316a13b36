import CairnProtocol
import Foundation
import Logging
import PostgresNIO

extension PostgresStorage {
    /// Brings the tables of `project`'s table collections in line with `schema`, inside the transaction that stores
    /// it: a table that is absent is created; one that exists is adopted when its columns fit (its other columns are
    /// left alone) and refused with `validation_failed` naming the column when not; the steps of a breaking change
    /// become `ALTER TABLE`; the triggers and the registry follow. A newly adopted table's rows become changes by
    /// `sql`, and the collection's records are written into it. A collection that leaves its table takes Cairn's
    /// triggers off it; the table and its rows stay.
    func applyTableCollections(
        _ connection: PostgresConnection, project: String, previous: Schema?, schema: Schema, logger: Logger
    ) async throws {
        let cairnSchema = try await Self.cairnSchema(connection, logger: logger)
        var registered: [String: TableName] = [:]
        for try await (collection, tableSchema, tableName) in try await connection.query(
            "SELECT collection, table_schema, table_name FROM table_collections WHERE project = \(project)", logger: logger
        ).decode((String, String, String).self) {
            registered[collection] = try TableName(parsing: "\(tableSchema).\(tableName)")
        }
        // Collections that left their table, or moved to another.
        for (collection, table) in registered {
            let next = schema.collection(named: collection)?.table.flatMap { try? TableName(parsing: $0) }
            guard next != table else { continue }
            let sql = TableCollectionSQL(project: project, collection: collection, table: table, columns: [], cairnSchema: cairnSchema)
            if try await Self.columns(of: table, connection, logger: logger) != nil {
                for statement in sql.dropStatements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
            }
            try await connection.query(
                "DELETE FROM table_collections WHERE project = \(project) AND collection = \(collection)", logger: logger)
            registered[collection] = nil
        }
        let steps = DataStep.resolve(schema.migrations, from: previous ?? Schema(collections: []))
        let ownTables = Set(StorageTable.all.map(\.name)).union(Self.tablesNotCopied.keys)
        for collection in schema.collections {
            guard let text = collection.table else { continue }
            let table = try TableName(parsing: text)
            guard table.schema != cairnSchema || !ownTables.contains(table.name) else {
                throw ErrorBody.validation("table \(table) is one of Cairn's own: a collection cannot live in it", field: "table")
            }
            let adopted = registered[collection.name] != table
            try await prepareTable(
                table, for: collection, steps: adopted ? [] : steps, project: project, cairnSchema: cairnSchema, adopting: adopted,
                connection, logger: logger)
        }
    }

    /// Creates, checks or alters one collection's table, then (re)makes its triggers and registers it.
    private func prepareTable(
        _ table: TableName, for collection: CollectionSchema, steps: [DataStep], project: String, cairnSchema: String, adopting: Bool,
        _ connection: PostgresConnection, logger: Logger
    ) async throws {
        func run(_ statement: String) async throws { _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
        var existing = try await Self.columns(of: table, connection, logger: logger)
        if existing == nil {
            for statement in TableCollectionSQL(
                project: project, collection: collection.name, table: table, columns: collection.fields.map(TableColumn.init(field:)),
                cairnSchema: cairnSchema
            ).createTable {
                try await run(statement)
            }
            existing = try await Self.columns(of: table, connection, logger: logger)
        } else if !adopting {
            var evolution = TableEvolution(table: table, columns: existing!.mapValues(\.type))
            for statement in evolution.statements(for: steps, collection: collection.name) { try await run(statement) }
            // Fields added since: new columns.
            for field in collection.fields where evolution.columns[field.name] == nil {
                try await run("ALTER TABLE \(table.quoted) ADD COLUMN \"\(field.name)\" \(TableColumn.naturalType(of: field.type))")
            }
            existing = try await Self.columns(of: table, connection, logger: logger)
        }
        let columns = try Self.check(table, existing ?? [:], against: collection, primaryKey: try await Self.primaryKey(of: table, connection, logger: logger))
        let sql = TableCollectionSQL(project: project, collection: collection.name, table: table, columns: columns, cairnSchema: cairnSchema)
        for statement in sql.triggerStatements + TableCollectionFunctions.recordsTriggers { try await run(statement) }
        do {
            try await connection.query(
                """
                INSERT INTO table_collections (project, collection, table_schema, table_name, upsert_sql, delete_sql)
                VALUES (\(project), \(collection.name), \(table.schema), \(table.name), \(sql.upsertSQL), \(sql.deleteSQL))
                ON CONFLICT (project, collection) DO UPDATE SET table_schema = excluded.table_schema, table_name = excluded.table_name,
                    upsert_sql = excluded.upsert_sql, delete_sql = excluded.delete_sql
                """, logger: logger)
        } catch where Self.isUniqueViolation(error) {
            throw ErrorBody.validation("table \(table) already holds another project's collection", field: "table")
        }
        guard adopting else { return }
        // What the table held before: changes by `sql`; then the collection's records, into the table.
        try await run(sql.importRows)
        try await run("SELECT set_config('cairn.mirroring', 'on', true)")
        var binds = PostgresBindings()
        binds.append(project)
        binds.append(collection.name)
        try await connection.query(PostgresQuery(unsafeSQL: sql.exportRecords, binds: binds), logger: logger)
        try await run("SELECT set_config('cairn.mirroring', '', true)")
    }

    /// The PostgreSQL schema Cairn's own tables are in (the connection's current schema).
    static func cairnSchema(_ connection: PostgresConnection, logger: Logger) async throws -> String {
        try await connection.query("SELECT current_schema()::text", logger: logger).decode(String.self).first(where: { _ in true }) ?? "public"
    }

    /// A column of an existing table: its type (`format_type`) and whether a row must give it a value.
    struct ExistingColumn: Sendable {
        let type: String
        let requiresValue: Bool
    }

    /// The columns of `table`, or `nil` when there is no such table.
    static func columns(of table: TableName, _ connection: PostgresConnection, logger: Logger) async throws -> [String: ExistingColumn]? {
        let quoted = table.quoted
        guard try await exists(connection, "SELECT 1 WHERE to_regclass(\(quoted)) IS NOT NULL", logger: logger) else { return nil }
        var columns: [String: ExistingColumn] = [:]
        for try await (name, type, notNull, hasDefault) in try await connection.query(
            """
            SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> ''
            FROM pg_attribute a WHERE a.attrelid = to_regclass(\(quoted)) AND a.attnum > 0 AND NOT a.attisdropped
            """, logger: logger
        ).decode((String, String, Bool, Bool).self) {
            columns[name] = ExistingColumn(type: type, requiresValue: notNull && !hasDefault)
        }
        return columns
    }

    /// The columns of `table`'s primary key.
    static func primaryKey(of table: TableName, _ connection: PostgresConnection, logger: Logger) async throws -> [String] {
        var names: [String] = []
        for try await name in try await connection.query(
            """
            SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
            WHERE i.indrelid = to_regclass(\(table.quoted)) AND i.indisprimary
            """, logger: logger
        ).decode(String.self) {
            names.append(name)
        }
        return names
    }

    /// The collection's fields as the table's columns; `validation_failed` naming the column that is missing, of the
    /// wrong type, or (among the others) demands a value Cairn never gives.
    static func check(
        _ table: TableName, _ columns: [String: ExistingColumn], against collection: CollectionSchema, primaryKey: [String]
    ) throws -> [TableColumn] {
        guard let id = columns["id"], TableColumn.fits(id.type, .string), primaryKey == ["id"] else {
            throw ErrorBody.validation("table \(table) needs a text column \"id\" as its primary key, for the record ids", field: "id")
        }
        var fitted: [TableColumn] = []
        for field in collection.fields {
            guard let column = columns[field.name] else {
                throw ErrorBody.validation(
                    "table \(table) has no column \"\(field.name)\" for field \(collection.name).\(field.name)", field: field.name)
            }
            guard TableColumn.fits(column.type, field.type) else {
                let accepted = TableColumn.acceptedTypes(for: field.type).sorted().joined(separator: ", ")
                throw ErrorBody.validation(
                    "column \"\(field.name)\" of table \(table) is \(column.type), which cannot hold field \(collection.name).\(field.name) "
                        + "(\(field.type.rawValue)): it must be one of \(accepted)", field: field.name)
            }
            fitted.append(TableColumn(field: field, sqlType: column.type))
        }
        let declared = Set(collection.fields.map(\.name) + ["id"])
        for (name, column) in columns.sorted(by: { $0.key < $1.key }) where !declared.contains(name) && column.requiresValue {
            throw ErrorBody.validation(
                "column \"\(name)\" of table \(table) is NOT NULL without a default, and no field of \(collection.name) fills it",
                field: name)
        }
        return fitted
    }
}
