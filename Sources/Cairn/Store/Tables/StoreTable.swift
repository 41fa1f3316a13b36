import GRDB

/// A part of the local store that owns some of its SQLite tables: their SQL, their share of the migrations, and
/// how they are emptied.
///
/// Every part is listed once in ``LocalStore/registry``, and wiping the store walks that list:
///
/// ```swift
/// for table in store.registry { try table.wipe(db) }
/// ```
protocol StoreTable: Sendable {
    /// The SQLite tables it owns.
    var tableNames: [String] { get }

    /// Removes everything it holds.
    func wipe(_ db: Database) throws
}

extension StoreTable {
    /// Deletes every row of its tables.
    func wipe(_ db: Database) throws {
        for name in tableNames { try db.execute(sql: "DELETE FROM \(name)") }
    }
}
