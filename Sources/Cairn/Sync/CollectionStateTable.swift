import CairnProtocol
import Foundation
import GRDB

/// A collection's download state.
struct CollectionPullState: Sendable, Hashable {
    /// Where the next page starts (`nil`: from a fresh snapshot).
    var cursor: String?
    /// True once a full pull completed.
    var firstPullDone: Bool
    /// True while the collection must be pulled again (new, gained fields, or a pull did not finish).
    var needsPull: Bool
    /// True while a fresh snapshot replaces the local records.
    var resyncing: Bool
    /// The versions of the store's own accepted writes not yet pulled past (``CollectionStateTable/noteOwn(_:versions:)``).
    var own: VersionRanges? = nil
}

/// The download state of each collection (`cairn_collections`: its pull cursor, whether a pull is due or under way)
/// and, while a fresh snapshot is being taken, the ids it listed so far (`cairn_resync`).
struct CollectionStateTable: StoreTable {
    var tableNames: [String] { ["cairn_collections", "cairn_resync"] }

    /// Its part of the first migration.
    static func createV1(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_collections (
                name TEXT PRIMARY KEY NOT NULL,
                cursor TEXT,
                first_pull_done INTEGER NOT NULL DEFAULT 0,
                needs_pull INTEGER NOT NULL DEFAULT 1,
                pulling INTEGER NOT NULL DEFAULT 0,
                resyncing INTEGER NOT NULL DEFAULT 0,
                filter TEXT,
                last_pull_at REAL
            );
            CREATE TABLE cairn_resync (collection TEXT NOT NULL, record_id TEXT NOT NULL, PRIMARY KEY (collection, record_id)) WITHOUT ROWID;
            """)
    }

    /// The ids a fresh snapshot of collection `?1` listed so far, as a subquery.
    static let listedIDsSQL = "SELECT record_id FROM cairn_resync WHERE collection = ?1"

    /// The download state of `collection` (a collection never seen needs a pull).
    func state(_ db: Database, _ collection: String) throws -> CollectionPullState {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT cursor, first_pull_done, needs_pull, resyncing, own_versions FROM cairn_collections WHERE name = ?"),
            arguments: [collection])
        else {
            return CollectionPullState(cursor: nil, firstPullDone: false, needsPull: true, resyncing: false)
        }
        return CollectionPullState(
            cursor: row[0], firstPullDone: row[1], needsPull: row[2], resyncing: row[3], own: (row[4] as String?).flatMap { VersionRanges(text: $0) })
    }

    /// Starts keeping the state of `collection`, if not already kept.
    func register(_ db: Database, _ collection: String) throws {
        try db.execute(sql: "INSERT INTO cairn_collections (name) VALUES (?) ON CONFLICT (name) DO NOTHING", arguments: [collection])
    }

    /// Marks `collection` to be pulled again.
    func markNeedsPull(_ db: Database, _ collection: String) throws {
        try db.execute(sql: "UPDATE cairn_collections SET needs_pull = 1 WHERE name = ?", arguments: [collection])
    }

    /// Notes that a pull of `collection` started.
    func markPulling(_ db: Database, _ collection: String) throws {
        try db.execute(sql: "UPDATE cairn_collections SET pulling = 1 WHERE name = ?", arguments: [collection])
    }

    /// Forgets the cursor, so the next pull takes a fresh snapshot that replaces the local records.
    func beginResync(_ db: Database, _ collection: String) throws {
        try db.execute(sql: "UPDATE cairn_collections SET cursor = NULL, resyncing = 1 WHERE name = ?", arguments: [collection])
        try db.execute(sql: "DELETE FROM cairn_resync WHERE collection = ?", arguments: [collection])
    }

    /// Notes the ids a snapshot page listed, when a resync is under way; returns whether one is.
    func noteListed(_ db: Database, _ collection: String, ids: some Sequence<String>) throws -> Bool {
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT resyncing FROM cairn_collections WHERE name = ?"), arguments: [collection]) ?? false
        else { return false }
        let seen = try db.cachedStatement(sql: "INSERT OR IGNORE INTO cairn_resync (collection, record_id) VALUES (?, ?)")
        for id in ids { try seen.execute(arguments: [collection, id]) }
        return true
    }

    /// Ends a resync: forgets the listed ids.
    func endResync(_ db: Database, _ collection: String) throws {
        try db.execute(sql: "DELETE FROM cairn_resync WHERE collection = ?", arguments: [collection])
        try db.execute(sql: "UPDATE cairn_collections SET resyncing = 0 WHERE name = ?", arguments: [collection])
    }

    /// Moves the cursor past a page applied in the same transaction; the last page (`hasMore` false) ends the pull.
    func commit(_ db: Database, _ collection: String, cursor: String, hasMore: Bool, at date: Date) throws {
        try db.cachedStatement(sql: """
            UPDATE cairn_collections SET cursor = ?, pulling = ?, needs_pull = CASE WHEN ? THEN needs_pull ELSE 0 END,
                   first_pull_done = CASE WHEN ? THEN first_pull_done ELSE 1 END, last_pull_at = ?
            WHERE name = ?
            """).execute(arguments: [cursor, hasMore, hasMore, hasMore, date.timeIntervalSince1970, collection])
    }

    /// Ends the pull of a collection pulled through its download queries, which keep their own cursors.
    func finishWithoutCursor(_ db: Database, _ collection: String, at date: Date) throws {
        try db.execute(sql: """
            UPDATE cairn_collections SET cursor = NULL, pulling = 0, needs_pull = 0, first_pull_done = 1, last_pull_at = ? WHERE name = ?
            """, arguments: [date.timeIntervalSince1970, collection])
    }

    /// When a page of `collection` was last applied.
    func lastPull(_ db: Database, _ collection: String) throws -> Date? {
        try Double.fetchOne(db, sql: "SELECT last_pull_at FROM cairn_collections WHERE name = ?", arguments: [collection])
            .map(Date.init(timeIntervalSince1970:))
    }

    /// True when the last download of any collection was interrupted, or a collection waits for one.
    func hasPendingDownload(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM cairn_collections WHERE pulling = 1 OR needs_pull = 1)") ?? false
    }
}
