import Foundation
import GRDB

/// The files kept on this device (`cairn_file_cache`), by server file id: where each is, its size, when it was
/// last read (for least-recently-used eviction) and whether it is pinned (never evicted).
struct FileCacheTable: StoreTable {
    var tableNames: [String] { ["cairn_file_cache"] }

    static func createV3(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE cairn_file_cache (
                file_id TEXT PRIMARY KEY NOT NULL,
                path TEXT NOT NULL,
                size INTEGER NOT NULL,
                last_access REAL NOT NULL,
                pinned INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX cairn_file_cache_lru ON cairn_file_cache(pinned, last_access);
            """)
    }

    /// A cached file's path (relative to the store's files folder), marking it read now.
    func touch(_ db: Database, fileID: String, at date: Date) throws -> String? {
        guard let path = try String.fetchOne(db, sql: "SELECT path FROM cairn_file_cache WHERE file_id = ?", arguments: [fileID]) else {
            return nil
        }
        try db.execute(sql: "UPDATE cairn_file_cache SET last_access = ? WHERE file_id = ?", arguments: [date.timeIntervalSince1970, fileID])
        return path
    }

    func insert(_ db: Database, fileID: String, path: String, size: Int64, pinned: Bool, at date: Date) throws {
        try db.execute(sql: """
            INSERT INTO cairn_file_cache (file_id, path, size, last_access, pinned) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (file_id) DO UPDATE SET path = excluded.path, size = excluded.size, last_access = excluded.last_access,
            pinned = max(pinned, excluded.pinned)
            """, arguments: [fileID, path, size, date.timeIntervalSince1970, pinned])
    }

    func setPinned(_ db: Database, fileID: String, _ pinned: Bool) throws {
        try db.execute(sql: "UPDATE cairn_file_cache SET pinned = ? WHERE file_id = ?", arguments: [pinned, fileID])
    }

    /// The bytes held by files that may be evicted.
    func evictableBytes(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT coalesce(sum(size), 0) FROM cairn_file_cache WHERE pinned = 0") ?? 0
    }

    /// Unpinned files, least recently read first.
    func leastRecentlyUsed(_ db: Database, limit: Int) throws -> [(fileID: String, path: String, size: Int64)] {
        try Row.fetchAll(db, sql: """
            SELECT file_id, path, size FROM cairn_file_cache WHERE pinned = 0 ORDER BY last_access, file_id LIMIT ?
            """, arguments: [limit]).map { ($0[0], $0[1], $0[2]) }
    }

    /// Forgets a file; returns its path, if it was kept.
    func remove(_ db: Database, fileID: String) throws -> String? {
        let path = try String.fetchOne(db, sql: "SELECT path FROM cairn_file_cache WHERE file_id = ?", arguments: [fileID])
        try db.execute(sql: "DELETE FROM cairn_file_cache WHERE file_id = ?", arguments: [fileID])
        return path
    }

    /// Every file kept, with totals.
    func totals(_ db: Database) throws -> (count: Int, bytes: Int64, pinnedBytes: Int64) {
        let row = try Row.fetchOne(db, sql: """
            SELECT count(*), coalesce(sum(size), 0), coalesce(sum(CASE WHEN pinned THEN size ELSE 0 END), 0) FROM cairn_file_cache
            """)
        return (row?[0] ?? 0, row?[1] ?? 0, row?[2] ?? 0)
    }
}
