import GRDB
import GRDBSQLite

/// A prepared statement for the hot write loops of both sides (a pulled page's rows, a batch's records): each row's
/// values are bound one by one through SQLite's C API, then the statement runs through GRDB, which still sees every
/// execution (transaction bookkeeping, observation, errors).
///
/// GRDB's `execute(arguments:)` boxes every value into a `DatabaseValue` array first, which costs about as much as
/// SQLite's insert itself (`cairn bench`); this skips the boxing, not GRDB.
///
/// ```swift
/// let insert = try BoundStatement(db, sql: "INSERT INTO items (id, title, count) VALUES (?, ?, ?)")
/// try insert.execute { row in
///     row.bind("item-1")
///     row.bind("First")
///     row.bind(Int64(3))
/// }
/// ```
package struct BoundStatement {
    /// The GRDB statement (cached by the connection: prepared once per connection).
    package let statement: Statement

    /// Prepares `sql`, or takes it from the connection's statement cache.
    package init(_ db: Database, sql: String) throws {
        statement = try db.cachedStatement(sql: sql)
    }

    /// Binds one row's values in placeholder order (`bind` leaves every placeholder it does not reach NULL) and runs
    /// the statement.
    package func execute(_ bind: (inout Row) throws -> Void) throws {
        // A reset after a failed step answers that step's error (a constraint broken, say), which GRDB's own reset
        // would trap on: reset here first, ignoring it (the failure was thrown when it happened).
        sqlite3_reset(statement.sqliteStatement)
        // Clears the bindings and tells GRDB the (empty) arguments are bound: the values bound below are then the ones
        // `execute()` runs with, whatever other code ran this cached statement with.
        statement.setUncheckedArguments(StatementArguments())
        var row = Row(handle: statement.sqliteStatement)
        try bind(&row)
        try statement.execute()
    }

    /// The values of one execution, bound in placeholder order.
    package struct Row {
        let handle: OpaquePointer
        var index: Int32 = 1

        /// Binds text (copied by SQLite), or NULL.
        package mutating func bind(_ text: String?) {
            guard var text else { return bindNull() }
            text.withUTF8 { bytes in bind(bytes) }
        }

        /// Binds text given as UTF-8 bytes (copied by SQLite).
        package mutating func bind(_ utf8: UnsafeBufferPointer<UInt8>) {
            // An empty buffer may have no address, and a NULL pointer would bind NULL, not empty text.
            if let start = utf8.baseAddress {
                _ = start.withMemoryRebound(to: CChar.self, capacity: utf8.count) { sqlite3_bind_text(handle, index, $0, Int32(utf8.count), Self.transient) }
            } else {
                _ = sqlite3_bind_text(handle, index, "", 0, Self.transient)
            }
            index += 1
        }

        /// Binds an integer, or NULL.
        package mutating func bind(_ integer: Int64?) {
            guard let integer else { return bindNull() }
            sqlite3_bind_int64(handle, index, integer)
            index += 1
        }

        /// Binds a number, or NULL.
        package mutating func bind(_ number: Double?) {
            guard let number else { return bindNull() }
            sqlite3_bind_double(handle, index, number)
            index += 1
        }

        /// Binds a boolean as 1 or 0, or NULL.
        package mutating func bind(_ flag: Bool?) {
            bind(flag.map { $0 ? Int64(1) : 0 })
        }

        /// Binds NULL.
        package mutating func bindNull() {
            sqlite3_bind_null(handle, index)
            index += 1
        }

        /// `SQLITE_TRANSIENT`: SQLite copies the bytes before the call returns.
        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }
}
