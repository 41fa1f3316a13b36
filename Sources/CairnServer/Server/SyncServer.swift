import CairnProtocol
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The Cairn sync server: storage, auth, the changes feed, batches and live notices behind PROTOCOL.md's routes.
///
/// ```swift
/// let server = try SyncServer(configuration: ServerConfiguration(dataDirectory: directory))
/// try await server.run()   // until the task is cancelled
/// ```
public final class SyncServer: Sendable {
    /// Where it listens, where its data lives, retention, lifetimes and limits.
    public let configuration: ServerConfiguration
    /// Everything it keeps (by default the SQLite database in the data directory).
    public let storage: any ServerStorage
    /// Where it reads the time of day: token expiry, `updatedAt`, tombstone and operation horizons.
    public let clock: any WallClock
    /// What its timers wait on: the purge timer, live-notice heartbeats and a graceful stop's grace period.
    /// Tests pass a manual clock and never sleep.
    public let timers: any Clock<Duration>
    let logger: Logger
    let tokens: TokenService
    /// Checks the identity provider's JWTs; `nil` without ``ServerConfiguration/identityProvider``.
    let identityProvider: JWTVerifier?
    let hasher: PasswordHasher
    let loginThrottle: LoginThrottle
    let notifier: ChangeNotifier
    /// What it counts, answered at `GET /metrics`.
    let metrics = ServerMetrics()
    /// Whether its storage is full now (writes refused with `507`, `/ready` answering `503`).
    let space: StorageSpaceMonitor
    let access: AccessControl
    let feed: ChangesFeed
    let batches: BatchService
    /// The projects' schema histories, for translating old app builds' records.
    let evolution: SchemaEvolution
    let files: FileService
    /// Where files' bytes live (by default under the data directory's `files` folder).
    public let blobs: any BlobStore

    /// A server over `storage` and `blobs`, reading the time from `clock` and waiting on `timers`. Without
    /// `storage`, it opens the configuration's ``ServerConfiguration/backend`` (one that needs no connection: a
    /// PostgreSQL backend opens with ``open(configuration:clock:timers:logger:)``); without `blobs`, files' bytes
    /// go with that backend, or to the data directory's `files` folder.
    public init(
        configuration: ServerConfiguration, storage: (any ServerStorage)? = nil, blobs: (any BlobStore)? = nil,
        clock: any WallClock = SystemWallClock(),
        timers: any Clock<Duration> = ContinuousClock(), logger: Logger = Logger(label: "cairn.server")
    ) throws {
        self.configuration = configuration
        let opened = try storage.map { ServerBackend.Opened(storage: $0, blobs: DirectoryBlobStore(root: configuration.filesDirectory)) }
            ?? configuration.backend.openNow()
        self.storage = opened.storage
        self.notifier = ChangeNotifier(channel: self.storage.noticeChannel)
        self.clock = clock
        self.timers = timers
        self.logger = logger
        self.space = StorageSpaceMonitor(storage: self.storage, metrics: metrics, logger: logger)
        self.tokens = TokenService(
            storage: self.storage, clock: clock, accessTokenLifetime: configuration.accessTokenLifetime,
            refreshTokenLifetime: configuration.refreshTokenLifetime)
        self.identityProvider = try configuration.identityProvider.map { try JWTVerifier(configuration: $0, clock: clock) }
        self.hasher = PasswordHasher(cost: configuration.bcryptCost)
        self.loginThrottle = LoginThrottle(
            log: self.storage.loginFailures ?? MemoryLoginFailures(), maximumFailures: configuration.maximumLoginFailures,
            window: configuration.loginFailureWindow)
        self.access = AccessControl(storage: self.storage)
        self.feed = ChangesFeed(storage: self.storage)
        self.evolution = SchemaEvolution(storage: self.storage, clock: clock)
        self.batches = BatchService(storage: self.storage, evolution: self.evolution, notifier: notifier, metrics: metrics)
        self.blobs = blobs ?? opened.blobs
        self.files = FileService(
            storage: self.storage, blobs: self.blobs, commits: RecordCommits(storage: self.storage, notifier: notifier), metrics: metrics, clock: clock, maximumFileBytes: configuration.maximumFileBytes,
            maximumProjectBytes: configuration.maximumProjectFileBytes, uploadExpiry: configuration.fileUploadExpiry)
    }

    /// How records written outside a batch commit, announced to this server's live listeners.
    var commits: RecordCommits { RecordCommits(storage: storage, notifier: notifier) }

    /// Direct management of this server's accounts, projects and schemas.
    public var admin: ServerAdmin {
        var admin = ServerAdmin(storage: storage, bcryptCost: configuration.bcryptCost, clock: clock, evolution: evolution, notifier: notifier)
        admin.webhookSettings = configuration.webhooks
        return admin
    }

    /// The router with every route group and middleware.
    func makeRouter() -> Router<CairnRequestContext> {
        let router = Router(context: CairnRequestContext.self)
        router.add(middleware: RequestLogMiddleware(metrics: metrics))
        router.add(middleware: ErrorMiddleware(storage: storage, space: space))
        router.add(middleware: WireCompressionMiddleware(enabled: configuration.wireCompression, maximumBodyBytes: configuration.maximumBatchBytes))
        router.addRoutes(MetaRoutes(storage: storage, metrics: metrics, space: space).collection)
        router.addRoutes(
            AuthRoutes(storage: storage, access: access, tokens: tokens, hasher: hasher, loginThrottle: loginThrottle, clock: clock,
                identityProvider: identityProvider).collection, atPath: "v1/auth")
        let projectGroups: [any ProjectRouteGroup] = [
            SchemaRoutes(access: access, admin: admin),
            RuleRoutes(access: access, admin: admin),
            ChangesRoutes(access: access, feed: feed, evolution: evolution, metrics: metrics, clock: clock),
            BatchRoutes(
                access: access, batches: batches, clock: clock, maximumBytes: configuration.maximumBatchBytes,
                maximumOperations: configuration.maximumBatchOperations),
            EventRoutes(access: access, notifier: notifier, metrics: metrics, heartbeat: configuration.eventsHeartbeat, timers: timers),
            ClientRoutes(access: access, storage: storage, admin: admin, clock: clock),
            FileRoutes(access: access, files: files),
            MemberRoutes(access: access, admin: admin),
            IntegrationRoutes(access: access, admin: admin),
            ActionRoutes(access: access, actions: ActionService(storage: storage, access: access, clock: clock)),
        ]
        // Every project route needs a signed-in caller; each declares the role it needs (see ProjectRoutes).
        let authentication = AuthenticationMiddleware(tokens: tokens, identityProvider: identityProvider)
        let projects = router.group("v1/projects/:project").add(middleware: authentication)
        for group in projectGroups { projects.addRoutes(group.collection) }
        // The server-wide administration routes need a signed-in server operator (see AdminRoutes).
        router.group("v1/admin").add(middleware: authentication)
            .addRoutes(AdminRoutes(access: access, admin: admin).collection)
        router.addRoutes(PublicFileRoutes(files: files).collection, atPath: "v1/public")
        router.addRoutes(ConsoleRoutes(files: .shipped).collection)
        return router
    }

    /// The Hummingbird application serving this server on `port` (the configuration's by default); `onRunning`
    /// receives the bound port. Its services include the storage, closed after the listener stops.
    public func makeApplication(port: Int? = nil, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        makeApplication(port: port, runsStorage: true, onRunning: onRunning)
    }

    /// The application; without `runsStorage`, the storage stays open when it stops (a listener that comes and goes).
    func makeApplication(
        port: Int?, runsStorage: Bool, onRunning: @escaping @Sendable (Int) async -> Void
    ) -> some ApplicationProtocol {
        // Shut down in reverse order: the listener first, then maintenance, then the storage.
        var services: [any Service] = []
        if runsStorage { services.append(storage) }
        services.append(MaintenanceService(server: self))
        services.append(WebhookOutbox(
            storage: storage, notifier: notifier, clock: clock, timers: timers, settings: configuration.webhooks, metrics: metrics,
            logger: logger))
        if let channel = notifier.channel { services.append(NoticeRelay(channel: channel, notifier: notifier, logger: logger, timers: timers)) }
        return Application(
            router: makeRouter(),
            configuration: .init(address: .hostname(configuration.host, port: port ?? configuration.port), serverName: "cairn"),
            services: services,
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Serves until the surrounding task is cancelled (or SIGTERM/SIGINT arrives).
    public func run() async throws {
        try await makeApplication { [logger, configuration] port in
            logger.info("cairn server listening", metadata: ["host": .string(configuration.host), "port": .stringConvertible(port)])
        }.runService()
    }

    /// Purges old tombstones, operation results and expired tokens, and sweeps `new` files past their expiry,
    /// now (the timer calls this too).
    @discardableResult
    public func purgeNow() async throws -> PurgeReport {
        let now = clock.now()
        var report = try await storage.purge(
            tombstonesBefore: now - configuration.tombstoneRetention,
            operationsBefore: now - max(configuration.operationRetention, 24 * 3600), now: now)
        report.files = try await files.sweep()
        return report
    }
}
