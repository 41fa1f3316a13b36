import CairnProtocol
import Foundation
import GRDB
import Synchronization

/// The client's SQLite store: one typed table per collection (named after it), plus Cairn's own `cairn_` tables
/// for the upload queue, base states, cursors, conflicts, failures and history.
///
/// Every local write and its queue entry commit in one transaction; every pulled page and its cursor too.
final class LocalStore: Sendable {
    let writer: any DatabaseWriter
    private let cachedSchema = Mutex<Schema?>(nil)

    init(location: StoreLocation) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        switch location {
        case .file(let path):
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            configuration.prepareDatabase { db in
                // FULL: a write that returned survives a power cut too.
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(sql: "PRAGMA cache_size = -8192")
                // Checkpoint the WAL every 16 MB rather than every 4 MB: sync bookkeeping rewrites the same pages
                // often, and a sync ends with a checkpoint of its own (see `checkpoint()`).
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 4000")
                try db.execute(sql: "PRAGMA journal_size_limit = 33554432")
                // Some system builds (Debian's) default to secure_delete = ON, which also writes every page an
                // acknowledged upload frees. FAST still zeroes deleted content on pages that stay in use.
                try db.execute(sql: "PRAGMA secure_delete = FAST")
            }
            writer = try DatabasePool(path: path, configuration: configuration)
        case .inMemory:
            writer = try DatabaseQueue(configuration: configuration)
        }
        try LocalMigrations.migrator.migrate(writer)
        if let text = try writer.read({ db in try Self.meta(db, .schema) }) {
            cachedSchema.withLock { $0 = try? CairnJSON.decode(Schema.self, from: Array(text.utf8)) }
        }
    }

    /// The last schema applied, if any.
    var schema: Schema? { cachedSchema.withLock { $0 } }

    func setCachedSchema(_ schema: Schema?) { cachedSchema.withLock { $0 = schema } }

    /// The collection's schema, or `invalid_argument`.
    func collection(_ name: String) throws -> CollectionSchema {
        guard let schema else { throw CairnError(.schemaUnavailable, "No schema is known yet: connect once so the store learns it") }
        guard let collection = schema.collection(named: name) else {
            throw CairnError.invalid("\"\(name)\" is not a collection of this project")
        }
        return collection
    }

    /// Runs a transaction of sync bookkeeping (marking uploads, recording answers, applying pulled pages) without
    /// waiting for the disk: a power cut may undo the last of these, and then the same operations are sent again
    /// (the server replays their results) or the same page is pulled again. The app's own writes always wait for
    /// the disk (`synchronous = FULL`).
    func writeBookkeeping<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            defer { try? db.execute(sql: "PRAGMA synchronous = FULL") }
            var result: T?
            try db.inTransaction(.immediate) {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }

    /// Copies the write-ahead log back into the database when nobody is reading, so it does not grow between
    /// syncs. Called when a sync ends.
    func checkpoint() {
        _ = try? writer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
    }

    // MARK: Meta

    enum MetaKey: String {
        case schema, schemaETag = "schema_etag", user, server, project, clientID = "client_id", device
    }

    static func meta(_ db: Database, _ key: MetaKey) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM cairn_meta WHERE key = ?", arguments: [key.rawValue])
    }

    static func setMeta(_ db: Database, _ key: MetaKey, _ value: String?) throws {
        if let value {
            try db.execute(sql: "INSERT INTO cairn_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                           arguments: [key.rawValue, value])
        } else {
            try db.execute(sql: "DELETE FROM cairn_meta WHERE key = ?", arguments: [key.rawValue])
        }
    }

    func meta(_ key: MetaKey) throws -> String? { try writer.read { db in try Self.meta(db, key) } }

    func setMeta(_ key: MetaKey, _ value: String?) throws { try writer.write { db in try Self.setMeta(db, key, value) } }
}

/// The server's record type (GRDB also has a `Record`).
typealias ServerRecord = CairnProtocol.Record

extension SQLArgument {
    /// The GRDB value of a compiled filter's argument.
    var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .integer(let int): return int.databaseValue
        case .real(let double): return double.databaseValue
        case .text(let text): return text.databaseValue
        }
    }
}
