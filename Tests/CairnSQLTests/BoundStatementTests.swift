import CairnSQL
import GRDB
import Testing

@Suite("Values bound through SQLite's C API")
struct BoundStatementTests {
    let sql = "INSERT INTO t (a, b, c, d, e) VALUES (?, ?, ?, ?, ?)"

    func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (a TEXT, b INTEGER, c REAL, d INTEGER, e TEXT)") }
        return queue
    }

    @Test("text (empty and non-ASCII), integers, numbers, booleans and NULL read back as bound")
    func roundTrip() throws {
        let queue = try database()
        try queue.write { db in
            let insert = try BoundStatement(db, sql: sql)
            try insert.execute { row in
                row.bind("Grüße ✓")
                row.bind(Int64.max)
                row.bind(2.5)
                row.bind(true)
                row.bind("")
            }
            try insert.execute { row in
                row.bind(String?.none)
                row.bind(Int64?.none)
                row.bind(-1.0)
                row.bind(false)
                // Placeholders not reached stay NULL, not the previous row's value.
            }
        }
        let rows = try queue.read { db in try Row.fetchAll(db, sql: "SELECT a, b, c, d, e FROM t ORDER BY rowid") }
        #expect(rows[0] == ["a": "Grüße ✓", "b": Int64.max, "c": 2.5, "d": 1, "e": ""])
        #expect(rows[1] == ["a": nil, "b": nil, "c": -1.0, "d": 0, "e": nil])
    }

    @Test("the same cached statement run by GRDB with arguments in between keeps each execution's own values")
    func sharedWithGRDB() throws {
        let queue = try database()
        try queue.write { db in
            try BoundStatement(db, sql: sql).execute { row in row.bind("first") }
            try db.cachedStatement(sql: sql).execute(arguments: ["grdb", 2, 2.0, false, "x"])
            try BoundStatement(db, sql: sql).execute { row in row.bind("third") }
        }
        let values = try queue.read { db in try String?.fetchAll(db, sql: "SELECT a FROM t ORDER BY rowid") }
        #expect(values == ["first", "grdb", "third"])
        let counts = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(b) FROM t") }
        #expect(counts == 1)
    }

    @Test("a constraint failure throws GRDB's error and leaves the statement usable")
    func failure() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE u (id TEXT PRIMARY KEY NOT NULL)")
            let insert = try BoundStatement(db, sql: "INSERT INTO u (id) VALUES (?)")
            try insert.execute { row in row.bind("a") }
            #expect(throws: DatabaseError.self) { try insert.execute { row in row.bind("a") } }
            try insert.execute { row in row.bind("b") }
        }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM u") } == 2)
    }
}
