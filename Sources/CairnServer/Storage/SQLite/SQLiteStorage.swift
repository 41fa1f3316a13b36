import CairnProtocol
import Foundation
import CairnSQL
import GRDB
import ServiceLifecycle
import Synchronization

/// The default backend: one embedded SQLite database (WAL mode) in the data directory.
///
/// Writes are serialised (one writer, and a first-in, first-out gate around each write, so a project write transaction's
/// accesses are never interleaved with another write): versions commit in order and the changes feed is gap-free.
/// Reads run concurrently on WAL snapshots.
///
/// ```swift
/// let storage = try SQLiteStorage(path: dataDirectory.appending(path: "cairn.sqlite").path)
/// ```
public final class SQLiteStorage: ServerStorage {
    let pool: DatabasePool
    /// A read-only connection of its own for ``lookUp(_:)``.
    private let lookups: DatabaseQueue
    /// Copies the WAL into the database file in the background, outside the gate.
    let checkpointer: BackgroundCheckpointer
    /// Held around every write access.
    let gate = WriteGate()
    /// When a commit is safe.
    let durability: CommitDurability
    /// Project schemas as last decoded, with the stored text they came from.
    let decodedSchemas = Mutex<[String: (text: String, schema: Schema)]>([:])

    /// Opens (creating if needed) the database at `path` and migrates it to the current version; usable at once.
    /// `durability` says when a commit is safe (``CommitDurability``).
    public init(path: String, durability: CommitDurability = .full) throws {
        self.durability = durability
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        // A project write transaction spans several accesses, under the gate.
        configuration.allowsUnsafeTransactions = true
        configuration.prepareDatabase { db in
            // 16 MB of page cache for the writer, whose batches touch index pages all over; 4 MB for each reader, whose
            // pages mostly scan in key order: with the pool's readers all busy the server stays near 100 MB less.
            try db.execute(sql: "PRAGMA cache_size = \(db.configuration.readonly ? -4096 : -16384)")
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            SQLiteFunctions.register(db)
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        var lookupConfiguration = Configuration()
        lookupConfiguration.readonly = true
        lookupConfiguration.busyMode = .timeout(10)
        lookups = try DatabaseQueue(path: path, configuration: lookupConfiguration)
        // WAL with FULL sync by default: every commit reaches the disk before the server answers, so a write it
        // acknowledged survives a power cut too (clients drop what the server acknowledged). Set on the open writer:
        // the pool turns it to NORMAL when it enables WAL, after `prepareDatabase`.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")") }
        try SQLiteMigrations.migrator.migrate(pool)
        // The WAL is copied into the database file in the background: a writer holding the gate never pays for it.
        checkpointer = try BackgroundCheckpointer(path: path)
        pool.writeWithoutTransaction { db in checkpointer.install(on: db) }
    }

    /// Waits for graceful shutdown (or cancellation), then closes the database once the writes in flight end.
    public func run() async throws {
        try? await gracefulShutdown()
        try await close()
    }

    /// Closes the database once the writes in flight end; later calls fail.
    public func close() async throws {
        checkpointer.close()
        try lookups.close()
        try await gate.withLock { try pool.close() }
    }

    /// Writes 256 KB beside the database file, syncs and removes it: room for a few batches' pages and WAL frames.
    public func probeSpace() async throws {
        let probe = URL(fileURLWithPath: pool.path).deletingLastPathComponent().appendingPathComponent(".cairn-space-probe")
        try await Task.detached {
            defer { try? FileManager.default.removeItem(at: probe) }
            guard FileManager.default.createFile(atPath: probe.path, contents: nil) else { throw POSIXError(.EACCES) }
            let handle = try FileHandle(forWritingTo: probe)
            defer { try? handle.close() }
            try handle.write(contentsOf: Data(count: 256 * 1024))
            try handle.synchronize()
        }.value
    }

    /// Reads the migration table: the database file answers, and `init` migrated it.
    public func checkReady() async throws {
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM grdb_migrations") }
    }

    /// One statement reading a row by key (a token, a membership, a schema's text) on the caller's thread, outside a
    /// transaction (one statement sees one snapshot). Every request makes a few such reads before its own work; a hop to
    /// a reader's queue and back, and a transaction around each, cost more than the reads themselves. Reads that take
    /// longer or span statements (pages of the feed, lists) go through `pool.read` and leave the caller's thread free.
    ///
    /// The lookups have a connection of their own, taken in turn and never held across an `await`: a caller waits at
    /// most for another lookup. Waiting on the pool's readers instead could block Swift's cooperative threads while the
    /// async reads holding those readers need one of them to give theirs back.
    func lookUp<T>(_ read: (Database) throws -> T) throws -> T {
        try lookups.unsafeRead(read)
    }

    /// One write access in its own transaction, under the gate.
    func write<T: Sendable>(_ updates: @Sendable (Database) throws -> T) async throws -> T {
        try await gate.withLock { try await pool.write(updates) }
    }

    /// One write access in its own transaction, under the gate, whose commit does not wait for the disk
    /// (`synchronous = NORMAL` for it): for notes a power cut may lose without harm, such as when a client last pulled.
    /// The next ordinary commit carries it to the disk with its own.
    func writeUnforced<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard durability == .full else { return try await write(updates) }
        return try await gate.withLock {
            try await pool.writeWithoutTransaction { db in try db.inUnforcedTransaction(updates) }
        }
    }

    /// The project's head version inside a database access.
    static func headVersion(_ db: Database, project: String) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT head_version FROM projects WHERE name = ?"), arguments: [project]) ?? 0
    }
}
