import GRDB

extension Database {
    /// Runs `body` in an immediate transaction whose commit does not wait for the disk (`synchronous = NORMAL` for it,
    /// then `FULL` again): for writes a power cut may undo without harm. Other connections see the commit at once, a
    /// crash of the process keeps it, and the next commit that waits for the disk carries it there too. Call it outside
    /// a transaction, on a connection whose `synchronous` is `FULL`.
    ///
    /// ```swift
    /// try writer.writeWithoutTransaction { db in try db.inUnforcedTransaction { db in try note(db) } }
    /// ```
    package func inUnforcedTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try execute(sql: "PRAGMA synchronous = NORMAL")
        defer { try? execute(sql: "PRAGMA synchronous = FULL") }
        var result: T?
        try inTransaction(.immediate) {
            result = try body(self)
            return .commit
        }
        return result!
    }
}
