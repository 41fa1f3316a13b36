import Foundation
import GRDB

/// The store's sync lease (`cairn_sync_lease`): at most one row, naming the process that may sync the store now and
/// until when. Processes that share a store file take it before they sync, so that only one syncs at a time.
///
/// ```swift
/// let refused = try table.take(db, claim, now: Date())   // nil: the lease is this claim's now
/// ```
struct SyncLeaseTable: StoreTable {
    /// Who holds the lease, as its row says.
    struct Holder: Sendable, Equatable {
        /// The holder's id: its process id and a random part, unique per open store.
        var id: String
        /// Its process id.
        var pid: Int32
        /// The host it runs on.
        var host: String
        /// True when a running scheduler keeps it between syncs (``CairnClient/run()``).
        var standing: Bool
        /// When it lapses unless renewed.
        var expiresAt: Date
    }

    var tableNames: [String] { ["cairn_sync_lease"] }

    /// Its part of the fifth migration.
    static func createV5(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_sync_lease (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                holder TEXT NOT NULL,
                pid INTEGER NOT NULL,
                host TEXT NOT NULL,
                standing INTEGER NOT NULL,
                expires_at REAL NOT NULL
            )
            """)
    }

    /// The current holder, expired or not.
    func holder(_ db: Database) throws -> Holder? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM cairn_sync_lease WHERE id = 1") else { return nil }
        return Holder(
            id: row["holder"], pid: row["pid"], host: row["host"], standing: row["standing"],
            expiresAt: Date(timeIntervalSince1970: row["expires_at"]))
    }

    /// Writes `claim` as the holder when the lease is free, already the claim's, expired, or held by a process of
    /// this host that no longer runs (`isRunning`); returns the other holder otherwise. Run it in a write transaction.
    func take(_ db: Database, _ claim: Holder, now: Date, isRunning: (Int32) -> Bool) throws -> Holder? {
        if let current = try holder(db), current.id != claim.id, current.expiresAt > now,
            current.host != claim.host || isRunning(current.pid)
        {
            return current
        }
        try db.execute(
            sql: """
                INSERT INTO cairn_sync_lease (id, holder, pid, host, standing, expires_at) VALUES (1, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, pid = excluded.pid, host = excluded.host,
                    standing = excluded.standing, expires_at = excluded.expires_at
                """,
            arguments: [claim.id, claim.pid, claim.host, claim.standing, claim.expiresAt.timeIntervalSince1970])
        return nil
    }

    /// Moves the expiry of `holder`'s lease (and its standing); false when the lease is no longer its.
    func renew(_ db: Database, holder: String, standing: Bool, until expiry: Date) throws -> Bool {
        try db.execute(
            sql: "UPDATE cairn_sync_lease SET expires_at = ?, standing = ? WHERE id = 1 AND holder = ?",
            arguments: [expiry.timeIntervalSince1970, standing, holder])
        return db.changesCount > 0
    }

    /// Gives the lease up if `holder` has it.
    func release(_ db: Database, holder: String) throws {
        try db.execute(sql: "DELETE FROM cairn_sync_lease WHERE id = 1 AND holder = ?", arguments: [holder])
    }
}
