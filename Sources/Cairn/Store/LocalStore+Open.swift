import Foundation
import CairnSQL
import GRDB

extension LocalStore {
    /// Opens the store at `location`: a file database (created with its folder if missing) with the pragmas below,
    /// or a database in memory. A file store whose file or folder cannot be written opens for reading only
    /// (``isReadOnly``): reads work, writes fail with `store_read_only`.
    ///
    /// ```swift
    /// let store = try LocalStore.open(.file(path))
    /// ```
    static func open(_ location: StoreLocation, configuration: StoreConfiguration = StoreConfiguration()) throws -> LocalStore {
        var database = Configuration()
        database.busyMode = .timeout(10)
        database.foreignKeysEnabled = true
        switch location {
        case .file(let path):
            let readOnly = StoreFiles.isReadOnly(path)
            if !readOnly {
                let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            // An encrypted store is registered with the store cipher before SQLite opens it; the key is checked first.
            let sqlitePath = try StoreCipher.sqlitePath(path)
            let cipher = try StoreKeying.register(path: sqlitePath, key: configuration.key)
            if !readOnly { try StoreKeying.removeLeftovers(of: sqlitePath) }
            // The lease lives as long as the database's connections (GRDB keeps this closure with them), so the file
            // counts as open until the last connection is gone.
            let lease = OpenStoreFiles.Lease(path: sqlitePath, cipher: cipher)
            // Releases SQLite's locks when the app is suspended (CairnClient.suspendNotification; see StoreSuspension).
            database.observesSuspensionNotifications = true
            database.prepareDatabase { db in
                SQLiteFunctions.register(db)
                // Sorts and temporary tables stay in memory, where the store cipher has nothing to protect.
                if let cipher = lease.cipher {
                    try db.execute(sql: "PRAGMA temp_store = MEMORY")
                    // A new store takes the header's page size (an existing one keeps its own, which is the same).
                    try db.execute(sql: "PRAGMA page_size = \(cipher.pageSize)")
                }
                try db.execute(sql: "PRAGMA cache_size = -2048")
                try db.execute(sql: "PRAGMA journal_size_limit = 33554432")
                // Some system builds (Debian's) default to secure_delete = ON, which also writes every page an
                // acknowledged upload frees. FAST still zeroes deleted content on pages that stay in use.
                try db.execute(sql: "PRAGMA secure_delete = FAST")
            }
            if readOnly { return try openReadOnly(sqlitePath, database: database, configuration: configuration, lease: lease) }
            let pool = try DatabasePool(path: sqlitePath, configuration: database)
            // FULL: a write that returned survives a power cut too. Set on the writer once it is open: GRDB sets
            // NORMAL when it turns WAL on, after `prepareDatabase` ran.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            // The WAL is copied into the database every 16 MB rather than every 4 MB (sync bookkeeping rewrites the
            // same pages often, and a sync ends with a checkpoint of its own, see `checkpoint()`), in the background:
            // a pull's writes go on meanwhile. Past 64 MB the writer checkpoints itself.
            let checkpointer = try BackgroundCheckpointer(path: sqlitePath, configuration: database, threshold: 4000, backstop: 16_000)
            pool.writeWithoutTransaction { db in checkpointer.install(on: db) }
            return try LocalStore(writer: pool, configuration: configuration, lease: lease, checkpointer: checkpointer)
        case .inMemory:
            database.prepareDatabase { db in SQLiteFunctions.register(db) }
            return try LocalStore(writer: DatabaseQueue(configuration: database), configuration: configuration)
        }
    }

    /// Opens a store file that cannot be written, for reading. A WAL store in a folder that cannot be written has no
    /// room for SQLite's shared-memory index beside it: it is then opened as immutable (nothing can change it there).
    private static func openReadOnly(
        _ sqlitePath: String, database: Configuration, configuration: StoreConfiguration, lease: OpenStoreFiles.Lease
    ) throws -> LocalStore {
        var database = database
        database.readonly = true
        func open(_ path: String) throws -> LocalStore {
            let queue = try DatabaseQueue(path: path, configuration: database)
            return try LocalStore(writer: queue, configuration: configuration, lease: lease, readOnly: true)
        }
        do {
            return try open(sqlitePath)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CANTOPEN {
            let encoded = sqlitePath.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? sqlitePath
            return try open("file:\(encoded)?immutable=1")
        }
    }
}
