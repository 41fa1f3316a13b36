import Foundation
import GRDB

/// The upload groups the app holds (`cairn_held_groups`): their queued changes stay local until released
/// (``CairnClient/hold(uploadGroup:)``, PingPong's `stash`).
struct HeldGroupTable: StoreTable {
    var tableNames: [String] { ["cairn_held_groups"] }

    /// Migration v11.
    static func createV11(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE cairn_held_groups (name TEXT PRIMARY KEY NOT NULL, held_at REAL NOT NULL) WITHOUT ROWID")
    }

    /// A condition on the queue `q`: its change is in no held group.
    static let notHeldSQL = "(q.upload_group IS NULL OR q.upload_group NOT IN (SELECT name FROM cairn_held_groups))"

    /// Holds `group`; true when it was not held yet.
    func hold(_ db: Database, _ group: String, at date: Date) throws -> Bool {
        try db.execute(sql: "INSERT OR IGNORE INTO cairn_held_groups (name, held_at) VALUES (?, ?)", arguments: [group, date.timeIntervalSince1970])
        return db.changesCount > 0
    }

    /// Releases `group`; true when it was held.
    func release(_ db: Database, _ group: String) throws -> Bool {
        try db.execute(sql: "DELETE FROM cairn_held_groups WHERE name = ?", arguments: [group])
        return db.changesCount > 0
    }

    /// The held groups, by name.
    func all(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM cairn_held_groups ORDER BY name")
    }
}
