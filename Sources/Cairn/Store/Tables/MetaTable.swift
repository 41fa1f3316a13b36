import GRDB

/// Facts about the store as a whole, by key (`cairn_meta`): whose it is, its server, project and device, the last
/// schema and its ETag, the id the server gave this client, and the key of its sealed files.
struct MetaTable: StoreTable {
    /// What the table remembers.
    enum Key: String, Sendable, CaseIterable {
        case schema, schemaETag = "schema_etag", user, server, project, clientID = "client_id", device
        /// The hex key that seals the store's files (``FileSealing``); kept only inside an encrypted store.
        case fileKey = "file_key"
        /// Set once every file in the store's folder is sealed (files kept before the store was encrypted included).
        case filesSealed = "files_sealed"
        /// The schema number the app build last opened the store with (``CairnConfiguration/schemaVersion``).
        case schemaVersion = "schema_version"
        /// When the last push, and the last pull, completed (seconds since 1970), and their measured rates (operations
        /// or records per second): ``SyncStatus/lastUpload``, ``SyncStatus/lastDownload`` and the rates, after a relaunch.
        case lastUpload = "last_upload", lastDownload = "last_download", uploadRate = "upload_rate", downloadRate = "download_rate"
    }

    var tableNames: [String] { ["cairn_meta"] }

    /// Its part of the first migration.
    static func createV1(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE cairn_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
    }

    /// The value of `key`, if set.
    func value(_ db: Database, _ key: Key) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM cairn_meta WHERE key = ?"), arguments: [key.rawValue])
    }

    /// Sets `key` to `value`, or removes it when `value` is `nil`.
    func set(_ db: Database, _ key: Key, _ value: String?) throws {
        if let value {
            try db.cachedStatement(sql: "INSERT INTO cairn_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
                .execute(arguments: [key.rawValue, value])
        } else {
            try db.cachedStatement(sql: "DELETE FROM cairn_meta WHERE key = ?").execute(arguments: [key.rawValue])
        }
    }
}
