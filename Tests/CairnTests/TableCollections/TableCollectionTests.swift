import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import NIOCore
import PostgresNIO
import Testing

/// Collections kept in PostgreSQL tables: devices and plain SQL write the same rows, and both reach everyone.
@Suite("Collections in PostgreSQL tables", .timeLimit(.minutes(20)))
struct TableCollectionTests {
    static let orderFields = [
        FieldSchema(name: "title", type: .string), FieldSchema(name: "qty", type: .integer), FieldSchema(name: "done", type: .boolean),
        FieldSchema(name: "due", type: .datetime), FieldSchema(name: "meta", type: .json),
    ]
    static let schema = Schema(collections: [
        CollectionSchema(name: "orders", fields: orderFields, conflictPolicy: .mergeFields, table: "erp.work_orders"),
        CollectionSchema(name: "tickets", fields: [FieldSchema(name: "title", type: .string)], conflictPolicy: .reject, table: "erp.tickets"),
        CollectionSchema(name: "notes", fields: [FieldSchema(name: "text", type: .string)]),
    ])

    @Test("device writes land as rows; INSERT, UPDATE, DELETE and COPY from any session reach devices as changes by sql, in order, once; a rollback leaves nothing")
    func sqlAndDevices() async throws {
        guard TableHarness.available("the table collection tests") else { return }
        try await TableHarness.with(schema: Self.schema) { harness in
            let alice = try await harness.client("alice"), bob = try await harness.client("bob")
            _ = try alice.save("orders", id: "o1", data: ["title": "Pump", "qty": 2, "done": false, "due": "2026-12-01T10:00:00+02:00", "meta": ["a": [1, 2]]])
            _ = try await alice.sync()
            let first = try await harness.rows(of: "erp.work_orders", columns: ["title", "qty", "done", "meta"])
            #expect(first == ["o1": ["title": "Pump", "qty": 2, "done": false, "meta": ["a": [1, 2]]]])
            #expect(try await harness.value("SELECT to_char(due AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') FROM erp.work_orders") == "2026-12-01 08:00")
            let before = try await harness.feed("carl", "orders")

            // Another program's session, its search path its own.
            try await harness.sql(searchPath: "erp") { connection in
                try await connection.query("INSERT INTO work_orders (id, title, qty) VALUES ('o2', 'Valve', 5), ('o3', 'Hose', 1)", logger: TableHarness.logger)
                try await connection.query("BEGIN", logger: TableHarness.logger)
                try await connection.query("UPDATE work_orders SET qty = 7 WHERE id = 'o1'", logger: TableHarness.logger)
                try await connection.query("DELETE FROM work_orders WHERE id = 'o3'", logger: TableHarness.logger)
                try await connection.query("COMMIT", logger: TableHarness.logger)
                try await connection.query("BEGIN", logger: TableHarness.logger)
                try await connection.query("INSERT INTO work_orders (id, title) VALUES ('o9', 'never')", logger: TableHarness.logger)
                try await connection.query("ROLLBACK", logger: TableHarness.logger)
                try await connection.copyFrom(table: "work_orders", columns: ["id", "title", "qty", "done"], logger: TableHarness.logger) { writer in
                    try await writer.write(ByteBuffer(string: "c1\tCrate\t10\tt\nc2\tBox\t\\N\tf\n"))
                }
            }
            _ = try await bob.sync()
            let table = try await harness.rows(of: "erp.work_orders", columns: ["title", "qty", "done", "meta"])
            #expect(Set(table.keys) == ["o1", "o2", "c1", "c2"])
            var local = try TableHarness.local(bob, "orders")
            #expect(local["o1"]?["due"] == "2026-12-01T10:00:00+02:00", "a field SQL did not touch keeps the device's text")
            local["o1"]?["due"] = nil
            #expect(local == table)

            let after = try await harness.feed("carl", "orders", since: before.cursor)
            // The feed lists each record once, at its latest version: o3 as the tombstone of its delete.
            #expect(after.changes.map(\.id) == ["o2", "o1", "o3", "c1", "c2"])
            #expect(after.changes.allSatisfy { $0.updatedBy == "sql" })
            #expect(after.changes.map(\.deleted) == [false, false, true, false, false])
            // Seven versions for seven changes (two inserts, an update, a delete, two copied rows, and o1's save
            // before): the rolled-back insert took none.
            #expect(after.changes.map(\.version) == [2, 4, 5, 6, 7])
            // The same cursor again: nothing new, nothing twice.
            #expect(try await harness.feed("carl", "orders", since: after.cursor).changes.isEmpty)
            #expect(try await harness.feed("carl", "orders").changes.map(\.id).sorted() == ["c1", "c2", "o1", "o2"])

            // A device's delete removes the row; TRUNCATE is refused.
            _ = try await alice.sync()
            try alice.delete("orders", id: "o2")
            _ = try await alice.sync()
            #expect(try await harness.value("SELECT count(*)::text FROM erp.work_orders WHERE id = 'o2'") == "0")
            await #expect(throws: (any Error).self) { try await harness.execute("TRUNCATE erp.work_orders") }
        }
    }

    @Test("a device's queued edit meets the collection's policy against SQL as against any writer: merge-fields keeps both, reject refuses")
    func conflicts() async throws {
        guard TableHarness.available("the table collection tests") else { return }
        try await TableHarness.with(schema: Self.schema) { harness in
            let alice = try await harness.client("alice")
            try await harness.execute(
                "INSERT INTO erp.work_orders (id, title, qty) VALUES ('o1', 'Pump', 1)", "INSERT INTO erp.tickets (id, title) VALUES ('t1', 'Leak')")
            _ = try await alice.sync()
            _ = try alice.patch("orders", id: "o1", ["title": "Pump, checked"])
            _ = try alice.patch("tickets", id: "t1", ["title": "Leak, fixed"])
            try await harness.execute("UPDATE erp.work_orders SET qty = 4 WHERE id = 'o1'", "UPDATE erp.tickets SET title = 'Leak (ERP)' WHERE id = 't1'")
            let summary = try await alice.sync()
            #expect(summary.conflicts == 1, "the tickets edit, made on a version SQL replaced")
            let orders = try await harness.rows(of: "erp.work_orders", columns: ["title", "qty"])
            #expect(orders["o1"] == ["title": "Pump, checked", "qty": 4])
            #expect(try await harness.rows(of: "erp.tickets", columns: ["title"])["t1"] == ["title": "Leak (ERP)"])
            #expect(try TableHarness.local(alice, "orders")["o1"]?["qty"] == 4)
        }
    }

    @Test("an existing table is adopted with its rows and other columns left alone; a missing column, a wrong type or a column Cairn cannot fill is refused by name")
    func adoption() async throws {
        guard TableHarness.available("the table collection tests") else { return }
        try await TableHarness.with(schema: Schema(collections: [])) { harness in
            try await harness.execute(
                "CREATE SCHEMA erp",
                "CREATE TABLE erp.assets (id text PRIMARY KEY, name text, count integer, label varchar(20), site text NOT NULL DEFAULT 'depot')",
                "INSERT INTO erp.assets (id, name, count, site) VALUES ('a1', 'Drill', 3, 'north'), ('a2', 'Saw', 1, 'south')",
                "CREATE TABLE erp.lacking (id text PRIMARY KEY, name text)",
                "CREATE TABLE erp.mistyped (id text PRIMARY KEY, name text, count text)",
                "CREATE TABLE erp.demanding (id text PRIMARY KEY, name text, count bigint, label text, owner text NOT NULL)",
                "CREATE TABLE erp.numbered (id bigint PRIMARY KEY, name text)")
            let admin = harness.server.server.admin
            func schema(_ table: String, _ fields: [FieldSchema]) -> Schema {
                Schema(collections: [CollectionSchema(name: "assets", fields: fields, table: table)])
            }
            let fields = [FieldSchema(name: "name", type: .string), FieldSchema(name: "count", type: .integer), FieldSchema(name: "label", type: .string)]
            for (table, field) in [("erp.lacking", "count"), ("erp.mistyped", "count"), ("erp.demanding", "owner"), ("erp.numbered", "id")] {
                let refused = await refusal { try await admin.setSchema(project: TableHarness.project, schema(table, fields)) }
                #expect(refused?.code == .validationFailed && refused?.field == field, "\(table): \(String(describing: refused))")
            }
            try await admin.setSchema(project: TableHarness.project, schema("erp.assets", fields))
            let alice = try await harness.client("alice")
            _ = try await alice.sync()
            #expect(try TableHarness.local(alice, "assets") == ["a1": ["name": "Drill", "count": 3], "a2": ["name": "Saw", "count": 1]])
            #expect(try alice.record("assets", id: "a1")?.updatedBy == "sql")
            _ = try alice.save("assets", id: "a1", data: ["name": "Drill", "count": 4, "label": "red"])
            _ = try alice.save("assets", id: "a3", data: ["name": "Ladder"])
            _ = try await alice.sync()
            let rows = try await harness.rows(of: "erp.assets", columns: ["name", "count", "label", "site"])
            #expect(rows == [
                "a1": ["name": "Drill", "count": 4, "label": "red", "site": "north"], "a2": ["name": "Saw", "count": 1, "site": "south"],
                "a3": ["name": "Ladder", "site": "depot"],
            ])
            // The SQLite backend refuses "table" outright.
            try await TestServer.withServer(configure: { $0.postgresURL = nil }) { sqlite in
                try await sqlite.server.admin.addProject("field")
                let refused = await refusal { try await sqlite.server.admin.setSchema(project: "field", schema("erp.assets", fields)) }
                #expect(refused?.code == .validationFailed && refused?.field == "table")
            }
        }
    }

    @Test("renames, conversions and drops become ALTER TABLE; added fields become columns")
    func evolution() async throws {
        guard TableHarness.available("the table collection tests") else { return }
        let v1 = Schema(collections: [CollectionSchema(
            name: "jobs", fields: [FieldSchema(name: "label", type: .string), FieldSchema(name: "size", type: .string), FieldSchema(name: "old", type: .string)],
            table: "ops.jobs")])
        try await TableHarness.with(schema: v1) { harness in
            let alice = try await harness.client("alice")
            _ = try alice.save("jobs", id: "j1", data: ["label": "first", "size": "12", "old": "x"])
            _ = try alice.save("jobs", id: "j2", data: ["label": "second", "size": "big"])
            _ = try await alice.sync()
            var v2 = v1
            v2.collections[0].fields = [FieldSchema(name: "title", type: .string), FieldSchema(name: "size", type: .integer), FieldSchema(name: "extra", type: .boolean)]
            v2.migrations = [
                SchemaMigration(collection: "jobs", step: .rename(from: "label", to: "title")),
                SchemaMigration(collection: "jobs", step: .convert(field: "size", to: .integer, format: nil)),
                SchemaMigration(collection: "jobs", step: .drop(field: "old")),
            ]
            try await harness.server.server.admin.setSchema(project: TableHarness.project, v2)
            let columns = try await harness.value(
                "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'ops.jobs'::regclass AND attnum > 0 AND NOT attisdropped")
            #expect(columns == "id text, title text, size bigint, extra boolean")
            #expect(try await harness.rows(of: "ops.jobs", columns: ["title", "size"]) == ["j1": ["title": "first", "size": 12], "j2": ["title": "second"]])
            try await harness.execute("UPDATE ops.jobs SET title = 'renamed by SQL', extra = true WHERE id = 'j1'")
            let bob = try await harness.client("bob")
            _ = try await bob.sync()
            #expect(try TableHarness.local(bob, "jobs")["j1"] == ["title": "renamed by SQL", "size": 12, "extra": true])
        }
    }
}
