import CairnProtocol
import GRDB

/// The SQL functions Cairn adds to SQLite on both sides, so that compiled filters mean the same on the server's
/// database and in the client's store. Registered on every connection (``register(_:)``).
package enum SQLiteFunctions {
    /// `cairn_instant(text)`: ``RFC3339/instantKey(_:)`` of an RFC 3339 date-time, `NULL` for anything else.
    /// SQLite's own `julianday` reads neither a lowercase `t`, nor offsets beyond 14 hours, nor more than
    /// milliseconds.
    package static let instant = DatabaseFunction("cairn_instant", argumentCount: 1, pure: true) { values in
        guard let text = String.fromDatabaseValue(values[0]) else { return nil }
        return RFC3339.instantKey(text)
    }

    /// Adds Cairn's functions to a connection.
    package static func register(_ db: Database) {
        db.add(function: instant)
    }
}
