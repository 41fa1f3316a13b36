import CairnProtocol
import Foundation
import Hummingbird
import Logging
import NIOCore

/// The Cairn sync server: storage, auth, the changes feed, batches and live notices behind PROTOCOL.md's routes.
///
/// ```swift
/// let server = try SyncServer(configuration: ServerConfiguration(dataDirectory: directory))
/// try await server.run()   // until the task is cancelled
/// ```
public final class SyncServer: Sendable {
    public let configuration: ServerConfiguration
    public let storage: any ServerStorage
    public let clock: any WallClock
    let logger: Logger
    let tokens: TokenService
    let hasher: PasswordHasher
    let loginGate: LoginGate
    let notifier = ChangeNotifier()

    /// A server over `storage` (by default the SQLite database in the data directory).
    public init(
        configuration: ServerConfiguration, storage: (any ServerStorage)? = nil, clock: any WallClock = SystemWallClock(),
        logger: Logger = Logger(label: "cairn.server")
    ) throws {
        self.configuration = configuration
        if let storage {
            self.storage = storage
        } else {
            try FileManager.default.createDirectory(at: configuration.dataDirectory, withIntermediateDirectories: true)
            self.storage = try SQLiteStorage(path: configuration.databasePath)
        }
        self.clock = clock
        self.logger = logger
        self.tokens = TokenService(
            storage: self.storage, clock: clock, accessTokenLifetime: configuration.accessTokenLifetime,
            refreshTokenLifetime: configuration.refreshTokenLifetime)
        self.hasher = PasswordHasher(cost: configuration.bcryptCost)
        self.loginGate = LoginGate(
            throttle: LoginThrottle(maximumFailures: configuration.maximumLoginFailures, window: configuration.loginFailureWindow))
    }

    /// Direct management of this server's accounts, projects and schemas.
    public var admin: ServerAdmin { ServerAdmin(storage: storage, bcryptCost: configuration.bcryptCost, clock: clock) }

    /// The router with every route and middleware.
    func makeRouter() -> Router<CairnRequestContext> {
        let router = Router(context: CairnRequestContext.self)
        router.add(middleware: RequestLogMiddleware())
        router.add(middleware: ErrorMiddleware())
        addMetaRoutes(to: router)
        addAuthRoutes(to: router.group("v1/auth"))
        let project = router.group("v1/projects/:project")
        addSchemaRoutes(to: project)
        addChangesRoutes(to: project)
        addBatchRoutes(to: project)
        addEventRoutes(to: project)
        addClientRoutes(to: project)
        return router
    }

    /// The Hummingbird application serving this server on `port` (the configuration's by default); `onRunning`
    /// receives the bound port.
    public func makeApplication(port: Int? = nil, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        Application(
            router: makeRouter(),
            configuration: .init(address: .hostname(configuration.host, port: port ?? configuration.port), serverName: "cairn"),
            services: [MaintenanceService(server: self)],
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Serves until the surrounding task is cancelled (or SIGTERM/SIGINT arrives).
    public func run() async throws {
        try await makeApplication { [logger, configuration] port in
            logger.info("cairn server listening", metadata: ["host": .string(configuration.host), "port": .stringConvertible(port)])
        }.runService()
    }

    /// Purges old tombstones, operation results and expired tokens now (the timer calls this too).
    @discardableResult
    public func purgeNow() async throws -> PurgeReport {
        let now = clock.now()
        return try await storage.purge(
            tombstonesBefore: now - configuration.tombstoneRetention,
            operationsBefore: now - max(configuration.operationRetention, 24 * 3600), now: now)
    }
}

/// Serialises access to the login throttle.
actor LoginGate {
    var throttle: LoginThrottle
    init(throttle: LoginThrottle) { self.throttle = throttle }
    func retryAfter(_ user: String, now: Date) -> TimeInterval? { throttle.retryAfter(user, now: now) }
    func failed(_ user: String, now: Date) { throttle.recordFailure(user, now: now) }
    func succeeded(_ user: String) { throttle.recordSuccess(user) }
}
