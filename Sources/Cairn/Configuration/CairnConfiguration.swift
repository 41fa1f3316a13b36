import CairnProtocol
import Foundation
import Logging

/// How the client proves who it is.
public enum Credentials: Sendable {
    /// A user name and password, exchanged for tokens that refresh themselves.
    case password(user: String, password: String)
    /// The app's own sign-in supplies access tokens; called again whenever the server refuses one.
    /// The `user` names whose data the store holds.
    case token(user: String, provider: @Sendable () async throws -> String)

    /// The user these credentials belong to.
    public var user: String {
        switch self {
        case .password(let user, _), .token(let user, _): return user
        }
    }
}

/// Where the local store lives.
public enum StoreLocation: Sendable, Equatable {
    /// An SQLite database file (created if missing) with its WAL files beside it.
    case file(String)
    /// A database that lives only as long as the client.
    case inMemory
}

/// What to do when a store that belongs to one user is opened for another.
public enum UserChangePolicy: Sendable {
    /// Refuse with `user_mismatch` (the default): nothing is lost.
    case refuse
    /// Upload the previous user's pending changes with their tokens first (requires their credentials), then switch.
    case uploadFirst(previous: Credentials)
    /// Drop the previous user's local data and pending changes.
    case discard
}

/// The per-collection choice for a field both sides changed, in field-level merges.
public enum MergeFallback: Sendable {
    /// The server's value wins.
    case server
    /// The local value wins.
    case client
}

/// Everything a ``CairnClient`` needs.
///
/// ```swift
/// let configuration = CairnConfiguration(
///     serverURL: URL(string: "https://sync.example.com")!, project: "field", device: "iPad-7",
///     credentials: .password(user: "alice", password: password), store: .file(path))
/// ```
public struct CairnConfiguration: Sendable {
    /// The server's base URL without `/v1`, such as `https://sync.example.com`; request paths are appended to it.
    public var serverURL: URL
    /// The project to sync, by its server name (such as `field`); the user must be a member of it.
    public var project: String
    /// A name for this device, shown to server admins.
    public var device: String
    /// The app's name and version, shown to server admins.
    public var app: String?
    /// The schema number this build of the app was made for (`nil`: always the server's current schema). The client
    /// sends it on every call (`Cairn-Schema-Version`) and reads that schema: the server translates records between
    /// its shape and the current one (renamed fields, converted types) and never clears the fields this build does not
    /// know. A build below the project's minimum gets `upgrade_required`; its queued changes stay queued and are sent
    /// (translated from the shape they were made in) once a store is opened with the new number. See
    /// <doc:EvolvingASchema>.
    public var schemaVersion: Int?
    /// How the client signs in.
    public var credentials: Credentials
    /// Where the local store lives.
    public var store: StoreLocation
    /// The key of an encrypted store file (nil: the store is not encrypted). A store created with a key always needs
    /// it: opening it without one fails with `key_required`, with another with `wrong_key`. See <doc:Encryption>.
    public var storeKey: StoreKey?
    /// What to do when the store belongs to another user.
    public var userChange: UserChangePolicy = .refuse
    /// Operations per uploaded batch (1...1000).
    public var batchSize: Int = 500
    /// The most bytes of encoded operations per uploaded batch (default 2 MiB, well under the server's 10 MiB limit on
    /// a batch body): a batch ends before the operation that would pass it, so a few large records never make a
    /// batch the server refuses. An operation larger than this goes alone; a change set goes whole.
    public var batchBytes: Int = 2 << 20
    /// Records per downloaded page (1...10000). Two pages are in memory during a pull (the one written, the one
    /// arriving): the default keeps a first sync of a million records of about 500 bytes under 64 MB. The next page
    /// is asked for while one arrives; on a link whose round trip is long beside a page's transfer (satellite, a far
    /// server), pages grow past this size, up to 10,000, until each keeps the link busy for two round trips.
    public var pageSize: Int = Self.defaultPageSize
    /// Whether pages may grow past ``pageSize`` on links whose round trip is long beside a page's transfer (default
    /// true): the SDK learns the round trip from each page's head and the server's `Server-Timing`, and asks for up to
    /// 10,000 records a page, with two pages downloading ahead, so the link never waits on a round trip. False keeps
    /// every page at ``pageSize`` (tests that count pages, apps that need a fixed memory bound).
    public var adaptsPageSize = true
    /// Whether a pull asks for many pages in one answer (default true): the server sends them back to back, each with
    /// its cursor, and the SDK commits each as it arrives, so a link with a long round trip pays it once per answer
    /// instead of once per page; after a cut the pull goes on from the last page committed. False asks page by page
    /// (with ``adaptsPageSize``'s pages ahead), as with a server from before streams (tests that count page requests).
    public var streamsPages = true
    /// The default ``pageSize``.
    public static let defaultPageSize = 2000
    /// How conflicts are settled (default: field-level merge, the server winning fields changed on both sides).
    public var conflictResolver: ConflictResolver = .merge(fallback: .server)
    /// Per-collection conflict resolvers that replace ``conflictResolver`` for those collections.
    public var collectionResolvers: [String: ConflictResolver] = [:]
    /// Named sets of collections and download queries that can be pulled alone (``CairnClient/pull(group:)``), with
    /// the phase they take in automatic downloads; a group of phase 0 or below is left out of them (see
    /// ``DownloadGroup``). `["work": ["tasks", "logs"]]` still reads as groups without a phase.
    public var downloadGroups: [String: DownloadGroup] = [:]
    /// Pull order: the collections of the first list are phase 1, of the second phase 2, and so on (the phases of
    /// ``downloadGroups`` are the same numbers); lower phases are pulled first, collections in no phase come last.
    public var downloadPhases: [[String]] = []
    /// How many collections or download queries a pull downloads at once (default 1, one after another; SAP's
    /// `entityDownloadThreads`). Each commits its own pages with its own cursor, so a cut loses at most one page of
    /// each; phases still apply in order: a phase's collections all finish before the next phase starts. Values
    /// below 1 are `invalid_argument` at open.
    ///
    /// ```swift
    /// configuration.downloadConcurrency = 3   // three collections' pages in flight on a link with a long round trip
    /// ```
    public var downloadConcurrency = 1
    /// A download query per collection, kept in step with this setting at open: a collection listed here pulls only
    /// the records matching its filter (partial sync; the query is named `cairn.configuration.COLLECTION`). For
    /// several, overlapping or changing queries, use ``CairnClient/createDownloadQuery(name:collection:filter:prefetchFiles:)``.
    public var downloadFilters: [String: Filter] = [:]
    /// The app's local-only collections: typed tables that are queried like the others but never uploaded or pulled
    /// (drafts, settings, scratch data). Their names must differ from the server's collections.
    ///
    /// ```swift
    /// configuration.localCollections = [CollectionSchema(name: "drafts", fields: [FieldSchema(name: "text", type: .string)])]
    /// ```
    public var localCollections: [CollectionSchema] = []
    /// Local indexes to keep, by collection: each entry is one index's fields, in order (see
    /// ``CairnClient/createIndex(_:fields:)``).
    public var localIndexes: [String: [[String]]] = [:]
    /// String fields to index for full-text search, by collection (see ``CairnClient/enableFullTextSearch(in:fields:)``).
    public var fullTextSearch: [String: [String]] = [:]
    /// Collections whose queued changes go to the app's own ``CollectionSyncTask`` instead of the Cairn server.
    public var syncTasks: [String: any CollectionSyncTask] = [:]
    /// Work that runs on every full sync cycle, after the pull (``AutomaticSyncTask``).
    public var automaticTasks: [any AutomaticSyncTask] = []
    /// When ``CairnClient/run()`` syncs by itself: the push delay after writes, the periodic full sync, live notices.
    public var scheduling = SchedulingPolicy()
    /// How clients in several processes share the store file: noticing each other's writes, and which one syncs.
    public var sharedStore = SharedStorePolicy()
    /// How failed network calls are retried (also the scheduler's backoff between failed syncs).
    public var retry: RetryPolicy = RetryPolicy()
    /// gzip on the wire (default true): the client asks for compressed answers (`Accept-Encoding: gzip`) and
    /// compresses its uploads of changes once the server says it reads them. File bytes are never recompressed.
    /// `false` sends and asks for plain JSON only.
    public var compression = true
    /// The timeout of one HTTP request.
    public var requestTimeout: Duration = .seconds(30)
    /// How long a connection attempt may wait for an answer before the server counts as unreachable (default 10 s).
    /// A refused connection fails at once; one quick retry follows it (``RetryPolicy/maximumRefusedAttempts``). (URLSession
    /// has no connect timeout of its own: ``URLSessionTransport`` gives up when in this time the server showed no sign
    /// of life, no byte of an answer and none of a body accepted, and its address took no connection when tried.)
    public var connectTimeout: Duration = .seconds(10)
    /// The clock that timers, backoff and retries wait on; tests pass a manual clock and never sleep.
    public var clock: any Clock<Duration> = ContinuousClock()
    /// Where the client reads the time of day: token expiry, history and status timestamps.
    public var wallClock: any WallClock = SystemWallClock()
    /// When false, ``CairnClient/open(_:transport:)`` does not contact the server (fully offline use of a store
    /// that synced before).
    public var connectOnOpen: Bool = true
    /// How many file uploads run at once, beside record sync (default 2).
    public var fileUploadConcurrency: Int = 2
    /// The largest file ``CairnFiles/upload(from:name:contentType:tags:public:attachTo:source:permissions:)`` queues (default 1 GiB,
    /// the server's default limit); a larger one is refused at once with `file_too_large`.
    public var maximumFileBytes: Int64 = 1 << 30
    /// The bytes of downloaded files kept on the device; the least recently used beyond it are evicted (default
    /// 512 MB). Files of pending uploads and pinned files do not count and are never evicted.
    public var fileCacheBytes: Int64 = 512 << 20
    /// The time limit of one file transfer request (default one hour); a broken one resumes where it stopped.
    public var fileTransferTimeout: Duration = .seconds(3600)
    /// How often a file upload that fails for other than network reasons (a server error) is tried before it moves to the
    /// failed list (default 20). Network failures never fail an upload: it waits for the network, with backoff.
    public var maximumFileAttempts: Int = 20
    /// When true, file uploads wait while the network is metered (cellular, a personal hotspot), as the app reports
    /// with ``CairnClient/networkDidChange(metered:)`` (on Apple platforms, from `NWPath.isExpensive`). Record sync
    /// is not affected. Default false.
    public var filesOnlyOnUnmeteredNetworks = false
    /// Collections whose file fields are downloaded into the cache after each pull (within ``fileCacheBytes``).
    public var prefetchFiles: Set<String> = []
    /// Where the SDK says what it does (swift-log): each sync's steps at `debug`, finished syncs at `info`, conflicts
    /// and retries at `notice`, failed syncs and refused changes at `warning`, never record data, tokens or keys.
    /// Nothing is logged by default; the app picks the backend and the level.
    ///
    /// ```swift
    /// var logger = Logger(label: "com.example.field.sync")
    /// logger.logLevel = .debug
    /// configuration.logger = logger
    /// ```
    public var logger = Logger(label: "cairn", factory: { _ in SwiftLogNoOpLogHandler() })
    /// Logs every HTTP request at `debug`: method, path, status, time and sizes (default false).
    public var traceRequests = false
    /// With ``traceRequests``, adds record data to the traces: query strings and JSON bodies (default false). Sign-in
    /// and token bodies and headers are never logged. Turn it on only to debug, on a device you own.
    public var traceWithData = false
    /// How each traced request is written: ``TraceFormat/compact`` (the default), one line with the facts as
    /// metadata, or ``TraceFormat/pretty``, a block a person reads, with indented JSON bodies.
    public var traceFormat = TraceFormat.compact

    /// Whether ``CairnClient/open(_:transport:)`` downloads a store that holds no data before it returns (SAP's
    /// `autoInitialDownload`): ``InitialDownload/none`` (the default) returns at once and the app pulls;
    /// ``InitialDownload/awaitAtOpen`` pulls every collection first, with progress in ``CairnClient/statusUpdates()``,
    /// also after a user switch cleared the store. It needs ``connectOnOpen``; a failed download fails the open.
    /// Before `open` returns there is no client to ask: ``initialDownloadProgress`` hears the progress.
    public var initialDownload = InitialDownload.none
    /// Called with each status while ``InitialDownload/awaitAtOpen`` downloads during `open` (per-collection
    /// ``SyncStatus/collections`` progress), and once more with the status when the download ended; `nil`: not told.
    ///
    /// ```swift
    /// configuration.initialDownload = .awaitAtOpen
    /// configuration.initialDownloadProgress = { status in
    ///     let records = status.collections.values.reduce(0) { $0 + $1.appliedRecords }
    ///     print("downloaded \(records) records")
    /// }
    /// ```
    public var initialDownloadProgress: (@Sendable (SyncStatus) -> Void)?
    /// Folds a new create, update or patch of a record into its change still queued, so the server gets the net
    /// change (default true; SAP's `combineLocalUpdates`). Off, every write is uploaded as made.
    public var combineLocalUpdates = true
    /// Folds a delete into the record's change still queued: a record created and deleted before an upload is never
    /// sent (default true; SAP's `combineLocalDeletes`). Off, the create and the delete are both uploaded.
    public var combineLocalDeletes = true
    /// Makes a sync whose uploads the server refused throw `upload_refused`, listing them in `details.operations`
    /// (opId, collection, id, code), once the sync has done everything else (default false; SAP's
    /// `throwUploadFailures`). Off, the sync succeeds and ``SyncSummary/failed`` counts them; either way they wait in
    /// ``CairnClient/failedOperations(_:)``.
    public var throwUploadFailures = false

    /// A configuration with the settings that have no default; the others start as documented on each property
    /// (no `app`, batches of 500, pages of 2000, 30-second requests) and can be set afterwards.
    public init(serverURL: URL, project: String, device: String, credentials: Credentials, store: StoreLocation) {
        self.serverURL = serverURL
        self.project = project
        self.device = device
        self.credentials = credentials
        self.store = store
    }
}

/// What ``CairnClient/open(_:transport:)`` does with a store that holds no data: ``CairnConfiguration/initialDownload``.
public enum InitialDownload: String, Sendable, Hashable, Codable {
    /// Open returns at once; the first sync downloads.
    case none
    /// Open downloads every collection (by download phase) before it returns.
    case awaitAtOpen
}
