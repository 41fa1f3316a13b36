import CairnProtocol
import Foundation
import GRDB

/// The SQL of persistent download queries:
///
/// | table | holds |
/// | --- | --- |
/// | `cairn_download_queries` | each query: collection, filter, cursor, and while its filter changes, the filter whose records are already held (`held_filter`) with the cursor of the snapshot of what is new |
/// | `cairn_query_members` | which query holds which record (`listed` is cleared while a fresh snapshot re-lists them) |
/// | `cairn_partial_collections` | the collections pulled only through their download queries |
///
/// Wiping the store (a user switch) forgets the queries with everything else; those of
/// ``CairnConfiguration/downloadFilters`` are made again when the store opens.
struct DownloadQueryTable: StoreTable {
    /// Which part of a query a page belongs to.
    enum Phase: Sendable, Hashable {
        /// The query's feed; `snapshot` while a fresh snapshot lists its records again.
        case main(snapshot: Bool)
        /// The snapshot of the records a changed filter adds.
        case widening
    }

    /// A query's stored state.
    struct State: Sendable, Hashable {
        var name: String
        var collection: String
        var filterText: String
        var cursor: String?
        var resyncing: Bool
        var heldFilterText: String?
        var widenCursor: String?
        var firstPullDone: Bool
        var lastPullAt: Date?
        /// Whether the files its records point at are downloaded after each sync.
        var prefetchFiles = false

        var filter: Filter { (try? CairnJSON.decode(Filter.self, from: Array(filterText.utf8))) ?? .or([]) }
        var heldFilter: Filter? { heldFilterText.flatMap { try? CairnJSON.decode(Filter.self, from: Array($0.utf8)) } }
    }

    var tableNames: [String] { ["cairn_download_queries", "cairn_query_members", "cairn_partial_collections"] }

    /// Its part of migration v4.
    static func createV4(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_download_queries (
                name TEXT PRIMARY KEY NOT NULL, collection TEXT NOT NULL, filter TEXT NOT NULL,
                cursor TEXT, resyncing INTEGER NOT NULL DEFAULT 0,
                held_filter TEXT, widen_cursor TEXT,
                first_pull_done INTEGER NOT NULL DEFAULT 0, last_pull_at REAL
            );
            CREATE TABLE cairn_query_members (
                query TEXT NOT NULL, collection TEXT NOT NULL, record_id TEXT NOT NULL, listed INTEGER NOT NULL DEFAULT 1,
                PRIMARY KEY (query, record_id)
            ) WITHOUT ROWID;
            CREATE INDEX cairn_query_members_record ON cairn_query_members (collection, record_id);
            CREATE TABLE cairn_partial_collections (collection TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
            """)
    }

    /// Migration v11: a query may prefetch the files its records point at.
    static func addPrefetchFilesV11(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE cairn_download_queries ADD COLUMN prefetch_files INTEGER NOT NULL DEFAULT 0")
    }

    // MARK: Queries

    private static let columns =
        "name, collection, filter, cursor, resyncing, held_filter, widen_cursor, first_pull_done, last_pull_at, prefetch_files"

    private static func state(_ row: Row) -> State {
        State(name: row[0], collection: row[1], filterText: row[2], cursor: row[3], resyncing: row[4], heldFilterText: row[5],
              widenCursor: row[6], firstPullDone: row[7], lastPullAt: (row[8] as Double?).map(Date.init(timeIntervalSince1970:)),
              prefetchFiles: row[9])
    }

    /// One query's state.
    func state(_ db: Database, _ name: String) throws -> State? {
        try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM cairn_download_queries WHERE name = ?", arguments: [name]).map(Self.state)
    }

    /// The queries of a collection (or all), by name.
    func states(_ db: Database, collection: String?) throws -> [State] {
        if let collection {
            return try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM cairn_download_queries WHERE collection = ? ORDER BY name", arguments: [collection])
                .map(Self.state)
        }
        return try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM cairn_download_queries ORDER BY name").map(Self.state)
    }

    /// Adds a query; false if the name is taken.
    func insert(_ db: Database, name: String, collection: String, filterText: String, prefetchFiles: Bool = false) throws -> Bool {
        try db.execute(
            sql: "INSERT INTO cairn_download_queries (name, collection, filter, prefetch_files) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
            arguments: [name, collection, filterText, prefetchFiles])
        return db.changesCount > 0
    }

    /// Sets a query's filter. With `held`, the records of `held` are kept and only those of `filter AND NOT held`
    /// are downloaded next (from a fresh snapshot), before the cursor goes on; without it the query starts over.
    func setFilter(_ db: Database, _ name: String, filterText: String, heldFilterText: String?) throws {
        if let heldFilterText {
            try db.execute(
                sql: "UPDATE cairn_download_queries SET filter = ?, held_filter = ?, widen_cursor = NULL WHERE name = ?",
                arguments: [filterText, heldFilterText, name])
        } else {
            try db.execute(sql: """
                UPDATE cairn_download_queries SET filter = ?, cursor = NULL, resyncing = 0, held_filter = NULL, widen_cursor = NULL,
                       first_pull_done = 0 WHERE name = ?
                """, arguments: [filterText, name])
        }
    }

    /// Deletes a query (its members go with ``removeMembers(_:query:)``).
    func delete(_ db: Database, _ name: String) throws {
        try db.execute(sql: "DELETE FROM cairn_download_queries WHERE name = ?", arguments: [name])
    }

    /// Starts a fresh snapshot of a query: its members are unlisted until the snapshot lists them again.
    func beginSnapshot(_ db: Database, _ name: String) throws {
        try db.execute(sql: "UPDATE cairn_download_queries SET cursor = NULL, resyncing = 1 WHERE name = ?", arguments: [name])
        try db.execute(sql: "UPDATE cairn_query_members SET listed = 0 WHERE query = ?", arguments: [name])
    }

    /// Moves the main cursor past an applied page; the last page ends a snapshot and completes a first pull.
    func commit(_ db: Database, _ name: String, cursor: String, hasMore: Bool, at date: Date) throws {
        try db.cachedStatement(sql: """
            UPDATE cairn_download_queries SET cursor = ?, resyncing = CASE WHEN ? THEN resyncing ELSE 0 END,
                   first_pull_done = CASE WHEN ? THEN first_pull_done ELSE 1 END, last_pull_at = ?
            WHERE name = ?
            """).execute(arguments: [cursor, hasMore, hasMore, date.timeIntervalSince1970, name])
    }

    /// Moves the cursor of the snapshot of what a changed filter adds; its last page ends the change.
    func commitWidening(_ db: Database, _ name: String, cursor: String, hasMore: Bool, at date: Date) throws {
        try db.cachedStatement(sql: """
            UPDATE cairn_download_queries SET widen_cursor = CASE WHEN ? THEN ? END,
                   held_filter = CASE WHEN ? THEN held_filter END, last_pull_at = ?
            WHERE name = ?
            """).execute(arguments: [hasMore, cursor, hasMore, date.timeIntervalSince1970, name])
    }

    /// Forgets the snapshot cursor of a filter change, so that its snapshot starts again.
    func restartWidening(_ db: Database, _ name: String) throws {
        try db.execute(sql: "UPDATE cairn_download_queries SET widen_cursor = NULL WHERE name = ?", arguments: [name])
    }

    // MARK: Members

    /// Notes that `query` holds a record (listed by the current snapshot, if one runs).
    func addMember(_ db: Database, query: String, collection: String, id: String) throws {
        try db.cachedStatement(sql: """
            INSERT INTO cairn_query_members (query, collection, record_id, listed) VALUES (?, ?, ?, 1)
            ON CONFLICT (query, record_id) DO UPDATE SET listed = 1
            """).execute(arguments: [query, collection, id])
    }

    /// Notes that `query` no longer holds a record.
    func removeMember(_ db: Database, query: String, id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM cairn_query_members WHERE query = ? AND record_id = ?").execute(arguments: [query, id])
    }

    /// A deleted record leaves every query.
    func removeRecord(_ db: Database, collection: String, id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM cairn_query_members WHERE collection = ? AND record_id = ?").execute(arguments: [collection, id])
    }

    /// Removes the members a finished snapshot did not list; returns their ids.
    func removeUnlisted(_ db: Database, query: String) throws -> [String] {
        try String.fetchAll(db, sql: "DELETE FROM cairn_query_members WHERE query = ? AND listed = 0 RETURNING record_id", arguments: [query])
    }

    /// Removes every member of a query; returns their ids.
    func removeMembers(_ db: Database, query: String) throws -> [String] {
        try String.fetchAll(db, sql: "DELETE FROM cairn_query_members WHERE query = ? RETURNING record_id", arguments: [query])
    }

    /// The number of records a query holds.
    func memberCount(_ db: Database, query: String) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM cairn_query_members WHERE query = ?", arguments: [query]) ?? 0
    }

    /// The members of `query` whose local rows match `filter` (a query over their collection table).
    func members(_ db: Database, query: String, matching filter: LocalQuerySQL) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT t.id" + filter.fromWhere + " AND t.id IN (SELECT record_id FROM cairn_query_members WHERE query = ?)",
            arguments: filter.arguments + [query])
    }

    /// Deletes a record's row from its collection table when no query holds it and it has no local change
    /// (``LocalChanges``).
    func evictIfOrphan(_ db: Database, table: CollectionTable, id: String) throws {
        try db.cachedStatement(sql: """
            DELETE FROM \(table.quotedName) WHERE id = ?1
              AND NOT EXISTS (SELECT 1 FROM cairn_query_members WHERE collection = ?2 AND record_id = ?1)
              AND NOT \(LocalChanges.sql(collection: "?2", id: "?1"))
            """).execute(arguments: [id, table.name])
    }

    // MARK: Pulled pages

    /// A page of `query`, in the transaction of ``LocalStore/apply(_:to:)``: records join the query, tombstones leave
    /// every query, `gone` markers leave this one; a finished snapshot drops the members it did not list; the cursor
    /// of `phase` moves; a record no query holds any more leaves the device unless it has local changes.
    func applyPage(_ db: Database, _ page: PulledPage, query: String, phase: Phase, changes: PulledChangeWriter, at date: Date) throws {
        let collection = changes.table
        var leaving: [String] = []
        for change in page.changes {
            if change.gone {
                try removeMember(db, query: query, id: change.id)
                leaving.append(change.id)
                continue
            }
            if change.removed {
                try removeRecord(db, collection: collection.name, id: change.id)
            } else {
                try addMember(db, query: query, collection: collection.name, id: change.id)
            }
            try changes.write(change)
        }
        switch phase {
        case .main(let snapshot):
            if snapshot, !page.hasMore { leaving += try removeUnlisted(db, query: query) }
            try commit(db, query, cursor: page.cursor, hasMore: page.hasMore, at: date)
        case .widening:
            try commitWidening(db, query, cursor: page.cursor, hasMore: page.hasMore, at: date)
        }
        for id in leaving { try evictIfOrphan(db, table: collection, id: id) }
    }

    // MARK: Partial collections

    /// True when a collection is pulled only through its download queries.
    func isPartial(_ db: Database, _ collection: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM cairn_partial_collections WHERE collection = ?)"), arguments: [collection]) ?? false
    }

    /// The collections pulled only through download queries.
    func partialCollections(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT collection FROM cairn_partial_collections ORDER BY collection")
    }

    /// Marks a collection to be pulled only through its queries; the records no query holds leave the device once
    /// all its queries have pulled (``sweep(_:table:)``). Returns true when it was not marked before.
    func markPartial(_ db: Database, _ collection: String) throws -> Bool {
        try db.execute(sql: "INSERT INTO cairn_partial_collections (collection) VALUES (?) ON CONFLICT DO NOTHING", arguments: [collection])
        return db.changesCount > 0
    }

    /// Unmarks a collection: it is pulled whole again.
    func unmarkPartial(_ db: Database, _ collection: String) throws {
        try db.execute(sql: "DELETE FROM cairn_partial_collections WHERE collection = ?", arguments: [collection])
    }

    /// Once every query of a marked collection has completed a pull (and no filter change is still downloading):
    /// deletes the rows no query holds whose records have no local change (``LocalChanges``), such as records that left their last query while
    /// they had one, or that were pulled before the collection was marked.
    func sweep(_ db: Database, table: CollectionTable) throws {
        let unfinished = try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM cairn_download_queries WHERE collection = ? AND (first_pull_done = 0 OR held_filter IS NOT NULL))
            """, arguments: [table.name]) ?? true
        guard !unfinished else { return }
        try db.execute(sql: """
            DELETE FROM \(table.quotedName) AS t
            WHERE NOT EXISTS (SELECT 1 FROM cairn_query_members AS m WHERE m.collection = ?1 AND m.record_id = t.id)
              AND NOT \(LocalChanges.sql(collection: "?1", id: "t.id"))
            """, arguments: [table.name])
    }
}
