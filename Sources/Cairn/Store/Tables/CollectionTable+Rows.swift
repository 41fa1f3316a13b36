import CairnProtocol
import CairnSQL
import Foundation
import GRDB

/// A row's sync columns, without its data.
struct RowState: Sendable, Hashable {
    var version: Int64
    var updatedAt: String?
    var updatedBy: String?
}

extension CollectionTable {
    /// Writes the visible row of a record; its pending flag is whether the record has local changes (``LocalChanges``).
    func upsert(_ db: Database, id: String, data: [String: JSONValue], version: Int64, updatedAt: String?, updatedBy: String?) throws {
        var arguments: [DatabaseValue] = [id.databaseValue]
        arguments += columnValues(data)
        arguments += [JSONValue.object(data).jsonText().databaseValue, version.databaseValue, updatedAt.databaseValue, updatedBy.databaseValue]
        try db.cachedStatement(sql: sql.upsert).execute(arguments: StatementArguments(arguments))
    }

    /// The number of rows.
    func rowCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(quotedName)") ?? 0
    }

    /// Removes the visible row of a record.
    func remove(_ db: Database, id: String) throws {
        try db.cachedStatement(sql: sql.delete).execute(arguments: [id])
    }

    /// The visible row of a record, if any.
    func row(_ db: Database, id: String) throws -> VisibleRow? {
        try Row.fetchOne(db.cachedStatement(sql: sql.row), arguments: [id]).map { row in
            VisibleRow(id: id, data: decodeObject(row[0]) ?? [:], version: row[1], pending: row[2], updatedAt: row[3], updatedBy: row[4])
        }
    }

    /// The sync columns of a record's row, if any, without reading its data.
    func state(_ db: Database, id: String) throws -> RowState? {
        try Row.fetchOne(db.cachedStatement(sql: sql.state), arguments: [id]).map { row in
            RowState(version: row[0], updatedAt: row[1], updatedBy: row[2])
        }
    }

    /// Sets a row's server version and commit details, keeping its data and pending flag.
    func setSyncColumns(_ db: Database, id: String, version: Int64, updatedAt: String?, updatedBy: String?) throws {
        try db.cachedStatement(sql: sql.syncColumns).execute(arguments: [version, updatedAt, updatedBy, id])
    }

    /// Marks rows uploaded exactly as they are committed, from `[id, version, updatedAt, updatedBy]` arrays, except
    /// those of records with other changes queued or failed, or with a newer server state pulled into their shadow;
    /// returns the ids it marked.
    func acknowledge(_ db: Database, rows: [JSONValue]) throws -> Set<String> {
        Set(try String.fetchAll(db.cachedStatement(sql: sql.acknowledgeRows), arguments: [JSONValue.array(rows).jsonText(), name]))
    }

    /// Marks an uploaded row committed at `version` when its data is what the server committed (`data`, or always
    /// when `data` is `nil`); false when the row differs or is missing.
    func acknowledge(_ db: Database, id: String, version: Int64, updatedAt: String?, updatedBy: String?, data: String?) throws -> Bool {
        try db.cachedStatement(sql: sql.acknowledgeRow).execute(arguments: [version, updatedAt, updatedBy, id, data == nil, data ?? ""])
        return db.changesCount > 0
    }

    /// After a fresh snapshot: deletes the rows it did not list, unless their records have local changes (``LocalChanges``).
    func removeUnlisted(_ db: Database) throws {
        try db.execute(sql: sql.deleteUnlisted, arguments: [name])
    }

    /// The `(id, version)` pairs of the server states this replica holds, for ``CollectionDigest``.
    func serverStates(_ db: Database) throws -> [(String, Int64)] {
        var pairs: [(String, Int64)] = []
        let rows = try Row.fetchCursor(db, sql: sql.serverStates, arguments: [name])
        while let row = try rows.next() { pairs.append((row[0], row[1])) }
        return pairs
    }

    /// Writes pulled changes of records without local changes, with statements prepared once per page.
    func pulledRowWriter(_ db: Database) throws -> PulledRowWriter {
        PulledRowWriter(table: self, upsert: try BoundStatement(db, sql: sql.upsertPulled), remove: try db.cachedStatement(sql: sql.deleteSynced))
    }
}

/// Writes pulled changes into a collection table: a record newer than the row replaces it, a tombstone deletes it.
/// The rows' values are bound straight from the scanned change (``BoundStatement``): a first sync writes each row
/// once, at close to SQLite's own speed.
struct PulledRowWriter {
    let table: CollectionTable
    let upsert: BoundStatement
    let remove: Statement

    /// Writes one pulled change.
    func write(_ change: ScannedChange) throws {
        if change.removed {
            try remove.execute(arguments: [change.id])
            return
        }
        guard let page = change.page, let data = change.dataRange else { throw CairnError.badResponse("change \(change.id) lacks its data") }
        try page.bytes.withUnsafeBufferPointer { bytes in
            try upsert.execute { row in
                row.bind(change.id)
                table.bindColumns(change.values, of: bytes, to: &row)
                row.bind(UnsafeBufferPointer(rebasing: bytes[data]))
                row.bind(change.version)
                row.bind(change.updatedAt)
                row.bind(change.updatedBy)
            }
        }
    }
}
