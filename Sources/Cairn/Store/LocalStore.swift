import CairnProtocol
import Foundation
import CairnSQL
import GRDB
import Synchronization

/// The client's SQLite store: transactions, the registry of every table, and the records. One typed table per
/// collection (named after it) holds what the app reads, with the shadows of records that have local changes; a
/// local write, the pulled pages and the acknowledgement of uploads change them here, each in one transaction (a
/// local write and its queue entry commit together, and so do a pulled page and its cursor).
///
/// Each capability owns its tables and their SQL in its own folder, and reaches the records through this store:
/// the upload queue (``uploads``, `Queue/`), files (``files``, `Files/`), download states (``pullStates``, `Sync/`),
/// the history of sync runs (``history``, `Diagnostics/`), local indexes (``indexes``, `Indexes/`), download queries
/// (``DownloadQueryStore``), JSON caches (``JSONCaches``) and action calls (``actions``, `Actions/`). Whether a record
/// has local changes is one rule, ``LocalChanges``.
///
/// ```swift
/// let store = try LocalStore(writer: DatabaseQueue(), configuration: StoreConfiguration())
/// try store.apply(schema: schema, etag: nil)
/// try store.write(collection: "notes", id: "n-1", change: .save(["title": "Check exits"]))
/// let batch = try store.uploads.takeBatch(limit: 100)
/// ```
final class LocalStore: Sendable {
    /// The database.
    let writer: any DatabaseWriter
    /// The clock and limits.
    let configuration: StoreConfiguration
    /// Marks a file store open while it lives, and keeps an encrypted one registered with the store cipher.
    let lease: OpenStoreFiles.Lease?
    /// Copies a file store's WAL into the database in the background (``BackgroundCheckpointer``).
    let checkpointer: BackgroundCheckpointer?
    /// True when the store file opened for reading only (its file or folder cannot be written): see
    /// ``LocalStore/open(_:configuration:)``.
    let isReadOnly: Bool
    /// Where the sync engine's transactions run (``offPool(_:)``).
    private let blockingWork = BlockingQueue(label: "cairn.store")

    /// Facts about the store: owner, server, schema, client id.
    let metaTable = MetaTable()
    /// The key of the store's sealed files (``fileSealing``).
    let fileKey = Mutex<FileSealing?>(nil)

    /// The key of the store's sealed files: made when an encrypted store first opens, kept in its encrypted
    /// `cairn_meta`. A store decrypted later keeps it too, to read the files sealed before.
    var fileSealing: FileSealing? { fileKey.withLock { $0 } }

    /// True when new files must be sealed: the store itself is encrypted.
    var sealsFiles: Bool { configuration.key != nil && fileSealing != nil }
    /// Each collection's pull cursor and resync state (`cairn_collections`).
    let collectionStates = CollectionStateTable()
    /// The upload queue and attempt counts.
    let queue = QueueTable()
    /// Rejected uploads.
    let failed = FailedTable()
    /// The base and server states of records with local changes.
    let shadows = ShadowTable()
    /// Resolved conflicts.
    let conflictLog = ConflictTable()
    /// Sync runs (`cairn_events`).
    let events = EventTable()
    /// Queued, failed and completed file uploads.
    let fileUploads = FileUploadTable()
    /// Files kept on this device.
    let fileCache = FileCacheTable()
    /// File deletions waiting for a sync.
    let fileDeletions = FileDeletionTable()
    /// The indexes and full-text indexes the app asked for.
    let localIndexes = LocalIndexTable()
    /// Named JSON caches.
    let jsonCaches = JSONCacheTable()
    /// Download queries and the records each holds.
    let downloadQueries = DownloadQueryTable()
    /// Which process may sync the store now (``SyncLease``).
    let syncLease = SyncLeaseTable()
    /// Action calls waiting for upload.
    let queuedActions = QueuedActionTable()
    /// The outcomes of sent action calls.
    let actionResults = ActionResultTable()
    /// The upload groups held back from upload.
    let heldGroups = HeldGroupTable()

    /// Cairn's own tables, each once; the collection tables of the current schema follow them in ``registry``.
    var ownTables: [any StoreTable] {
        [metaTable, collectionStates, queue, failed, shadows, conflictLog, events, fileUploads, fileCache, localIndexes, jsonCaches, downloadQueries,
         syncLease, fileDeletions, queuedActions, actionResults, heldGroups]
    }

    /// Every table the store holds: Cairn's own, then one per collection of the current schema. Wiping walks it.
    var registry: [any StoreTable] {
        let collections = loaded.withLock { (Array($0.tables.values) + Array($0.localTables.values)).sorted { $0.name < $1.name } }
        return ownTables + collections.map { $0 as any StoreTable }
    }

    // MARK: Capabilities

    /// The upload queue: changes waiting for upload and failed uploads, their answers, conflicts and management.
    var uploads: UploadQueue { UploadQueue(store: self) }
    /// File uploads, the files kept on this device, and file deletions waiting for a sync.
    var files: LocalFiles { LocalFiles(store: self) }
    /// Each collection's download state.
    var pullStates: PullStates { PullStates(store: self) }
    /// The history of sync runs.
    var history: SyncHistory { SyncHistory(store: self) }
    /// The app's local indexes.
    var indexes: LocalIndexes { LocalIndexes(store: self) }
    /// Action calls queued for upload and their outcomes.
    var actions: LocalActions { LocalActions(store: self) }

    /// What is read once and kept: the schema with its tables' SQL, and the client id sent with every request.
    private struct Loaded {
        var schema: Schema?
        var tables: [String: CollectionTable] = [:]
        /// The app's local-only collections: never uploaded, never pulled.
        var localTables: [String: CollectionTable] = [:]
        var clientID: String?

        mutating func use(_ schema: Schema?) {
            self.schema = schema
            tables = Dictionary((schema?.collections ?? []).map { ($0.name, CollectionTable(schema: $0)) }) { first, _ in first }
        }
    }

    private let loaded = Mutex(Loaded())

    /// Opens a store on `writer`, migrating Cairn's tables first.
    ///
    /// The writer's configuration decides durability: ``open(_:configuration:)`` makes file databases wait for the
    /// disk on every app write (`synchronous = FULL`); sync bookkeeping relaxes that per transaction
    /// (``writeBookkeeping(_:)``).
    init(
        writer: any DatabaseWriter, configuration: StoreConfiguration = StoreConfiguration(), lease: OpenStoreFiles.Lease? = nil,
        checkpointer: BackgroundCheckpointer? = nil, readOnly: Bool = false
    ) throws {
        self.writer = writer
        self.configuration = configuration
        self.lease = lease
        self.checkpointer = checkpointer
        isReadOnly = readOnly
        // Filters compare date-times with Cairn's SQL function. Stores opened with `open` add it to every connection;
        // an injected single-connection writer (a `DatabaseQueue`) gets it here.
        if writer is DatabaseQueue { writer.writeWithoutTransaction { db in SQLiteFunctions.register(db) } }
        if readOnly {
            // Nothing can be migrated: a store an older Cairn wrote must be opened writable once first.
            guard try writer.read({ db in try LocalMigrations.migrator.hasCompletedMigrations(db) }) else {
                throw CairnError(.storeReadOnly, "The local store is read-only and was written by an older Cairn: open it writable once to upgrade it")
            }
        } else {
            try LocalMigrations.migrator.migrate(writer)
        }
        let (schemaText, clientID) = try writer.read { db in
            (try metaTable.value(db, .schema), try metaTable.value(db, .clientID))
        }
        let schema = schemaText.flatMap { try? CairnJSON.decode(Schema.self, from: Array($0.utf8)) }
        // A read-only store reads the files key it has; a writable one makes it on an encrypted store's first open.
        let encrypted = configuration.key != nil
        let sealing = try readOnly
            ? writer.read { [metaTable] db in try FileSealing.stored(db, in: metaTable, encrypted: encrypted, canWrite: false) }
            : writer.write { [metaTable] db in try FileSealing.stored(db, in: metaTable, encrypted: encrypted) }
        fileKey.withLock { $0 = sealing }
        loaded.withLock {
            $0 = Loaded(clientID: clientID)
            $0.use(schema)
        }
    }

    /// The time of day, from the configured clock.
    var now: Date { configuration.wallClock.now() }

    // MARK: Schema and tables

    /// The last schema applied, if any.
    var schema: Schema? { loaded.withLock { $0.schema } }

    /// Remembers `schema` (or forgets it) and builds its tables' SQL once.
    func use(_ schema: Schema?) { loaded.withLock { $0.use(schema) } }

    /// The collection's schema; `schema_unavailable` before any schema is known, `invalid_argument` for a name
    /// that is not a collection.
    func collection(_ name: String) throws -> CollectionSchema { try table(name).schema }

    /// The collection's table; throws as ``collection(_:)``.
    func table(_ name: String) throws -> CollectionTable {
        let (known, table) = loaded.withLock { ($0.schema != nil || !$0.localTables.isEmpty, $0.tables[name] ?? $0.localTables[name]) }
        guard known else { throw CairnError(.schemaUnavailable, "No schema is known yet: connect once so the store learns it") }
        guard let table else { throw CairnError.invalid("\"\(name)\" is not a collection of this project") }
        return table
    }

    /// Creates or migrates the tables of the app's local-only collections (with their indexes) and keeps them; a
    /// name the server's schema uses is `invalid_argument`.
    func declareLocal(_ collections: [CollectionSchema]) throws {
        let tables = collections.map { CollectionTable(schema: $0, isLocalOnly: true) }
        for table in tables {
            guard schema?.collection(named: table.name) == nil else {
                throw CairnError.invalid("\"\(table.name)\" is a collection of the server's schema; give the local-only collection another name")
            }
            guard Names.isValidCollectionName(table.name), !table.name.hasPrefix("cairn_") else {
                throw CairnError.invalid("\"\(table.name)\" is not a valid collection name")
            }
        }
        try writer.write { db in
            for table in tables {
                _ = try table.migrate(db)
                try localIndexes.apply(db, to: table)
            }
        }
        loaded.withLock { $0.localTables = Dictionary(tables.map { ($0.name, $0) }) { first, _ in first } }
    }

    /// The names of the local-only collections.
    var localCollections: Set<String> { loaded.withLock { Set($0.localTables.keys) } }

    // MARK: Client id

    /// The id the server gave this client, kept in memory so requests do not read it from the database.
    var clientID: String? { loaded.withLock { $0.clientID } }

    /// Remembers the id the server gave this client (`nil`: forgets it, and the next connected open registers anew).
    func setClientID(_ id: String?) throws {
        try writer.write { db in try metaTable.set(db, .clientID, id) }
        loaded.withLock { $0.clientID = id }
    }

    // MARK: Transactions

    /// Runs a transaction of sync bookkeeping (marking uploads, recording answers, applying pulled pages) without
    /// waiting for the disk: a power cut may undo the last of these, and then the same operations are sent again
    /// (the server replays their results) or the same page is pulled again. The app's own writes always wait for
    /// the disk (`synchronous = FULL`).
    func writeBookkeeping<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.writeBookkeeping(body)
    }

    /// Runs store work on the store's own queue, off Swift's cooperative pool: the sync engine's transactions go
    /// through here, so a pull or push waiting for SQLite's lock or the disk holds none of the threads an app's
    /// tasks run on.
    ///
    /// ```swift
    /// let applied = try await store.offPool { try $0.apply(page, to: .feed(collection: "notes")) }
    /// ```
    func offPool<T: Sendable>(_ work: @escaping @Sendable (LocalStore) throws -> T) async throws -> T {
        try await blockingWork.run { try work(self) }
    }

    /// Copies the write-ahead log back into the database when nobody is reading, so it does not grow between
    /// syncs. Called when a sync ends.
    func checkpoint() {
        _ = try? writer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
    }

    /// Closes the database's connections; every later use fails. The file may then be rewritten or deleted.
    func close() throws {
        checkpointer?.close()
        try writer.close()
        lease?.end()
    }

    /// Deletes every record, queue entry, cursor and remembered identity: the store is as new. Walks ``registry``.
    func wipe() throws {
        let tables = registry
        let sealing = configuration.key == nil ? nil : FileSealing.generate()
        try writer.write { db in
            for table in tables { try table.wipe(db) }
            // A new files key: whatever an old file's bytes still say on the disk, no key left here opens them.
            try metaTable.set(db, .fileKey, sealing?.hex)
        }
        fileKey.withLock { $0 = sealing }
        loaded.withLock { $0 = Loaded() }
    }
}

/// The server's record type (GRDB also has a `Record`).
typealias ServerRecord = CairnProtocol.Record
