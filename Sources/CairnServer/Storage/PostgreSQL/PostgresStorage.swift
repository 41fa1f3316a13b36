import CairnProtocol
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// The server's state in PostgreSQL, for several server instances on one database: pooled connections
/// (postgres-nio), the tables of ``PostgresMigrations``.
///
/// Several instances may share one database: every rule that must hold across them is kept by the database itself
/// (row locks for the feed, unique keys for names and opIds, conditional updates for tokens and files). File bytes
/// go to a ``PostgresBlobStore`` on the same database.
///
/// ```swift
/// let storage = try await PostgresStorage(url: "postgres://cairn@db.internal/cairn")
/// ```
public final class PostgresStorage: ServerStorage {
    let client: PostgresPool
    let logger: Logger
    /// What its timeouts run on.
    let timers: any Clock<Duration>
    private let running: Task<Void, Never>
    private let notices: PostgresNoticeChannel

    /// `NOTIFY` and `LISTEN` on this database.
    public var noticeChannel: (any NoticeChannel)? { notices }
    /// Collections may live in PostgreSQL tables of their own.
    public var supportsTableCollections: Bool { true }
    /// The `login_failures` table.
    public var loginFailures: (any LoginFailureLog)? { self }
    /// The pool's connections held now, and its maximum.
    public var poolUsage: PoolUsage? { PoolUsage(inUse: client.inUse, maximum: client.maximum) }

    /// Connects to the database at `url` (``PostgresURL``) and migrates it; several instances may do so at once.
    /// Its timeouts (a connection that does not come, a database that does not answer) run on `timers`.
    public init(url: String, logger: Logger = Logger(label: "cairn.postgres"), timers: any Clock<Duration> = ContinuousClock()) async throws {
        let configuration = try PostgresURL.configuration(url)
        let pooled = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let client = PostgresPool(pooled, maximum: configuration.options.maximumConnections, timers: timers)
        self.client = client
        self.logger = logger
        self.timers = timers
        notices = PostgresNoticeChannel(client: client, logger: logger)
        // The pool leases connections only while `run()` runs (started before the probe, so it runs by the first
        // lease); it stops at `close()`.
        running = Task { await pooled.run() }
        do {
            try await PostgresURL.probe(url, logger: logger)
        } catch {
            running.cancel()
            throw ErrorBody(
                code: .internalError,
                message: "cannot connect to PostgreSQL at \(configuration.host ?? "?"):\(configuration.port ?? 5432): \(Self.describe(error))")
        }
        do {
            try await PostgresMigrations.migrate(client, logger: logger)
        } catch {
            running.cancel()
            throw ErrorBody(code: .internalError, message: "cannot prepare the PostgreSQL database: \(Self.describe(error))")
        }
    }

    /// Waits for graceful shutdown (or cancellation), then closes the pool.
    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Closes the pool's connections; later calls fail. Waits for the pool to close for ``closeGrace`` at most:
    /// after the database restarted under it, postgres-nio's pool can wait for ever on a connection the restart cut,
    /// and a server must still stop (it logs that it stopped without waiting).
    public func close() async {
        running.cancel()
        let running = self.running
        do {
            try await Abandonable.value(of: Task { await running.value }, within: Self.closeGrace, timers: timers) {
                ErrorBody(code: .unavailable, message: "the PostgreSQL pool did not close within \(Self.closeGrace)")
            }
        } catch {
            logger.warning("stopping without waiting for the PostgreSQL pool", metadata: ["error": "\(error)"])
        }
    }

    /// How long ``close()`` waits for the pool's connections to close.
    static let closeGrace = Duration.seconds(5)

    /// Runs `body` in a transaction on one pooled connection: committed when it returns, rolled back when it throws,
    /// and then its own error is thrown (postgres-nio wraps it with the transaction's other errors).
    static func transaction<T: Sendable>(
        _ client: PostgresPool, logger: Logger, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            if let closureError = error.closureError, error.rollbackError == nil { throw closureError }
            throw error
        }
    }

    /// Asks the database for its newest migration, within 2 seconds (a pool waiting for a database that is down
    /// would otherwise wait for ever); throws `unavailable` with the reason.
    public func checkReady() async throws {
        let client = self.client, logger = self.logger, timers = self.timers
        let newest = try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask {
                try await PostgresMigrations.appliedVersions(client, logger: logger).last
            }
            group.addTask {
                try await timers.sleep(for: .seconds(2))
                throw ErrorBody(code: .unavailable, message: "PostgreSQL did not answer within 2 seconds")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
        guard let newest, newest >= PostgresMigrations.all.last!.version else {
            throw ErrorBody(code: .unavailable, message: "the PostgreSQL database lacks migrations; a newer server must start first")
        }
    }

    /// What went wrong, in PostgreSQL's words when the server answered; other errors as they describe themselves.
    public func describe(_ error: any Error) -> String { Self.describe(error) }

    /// Whether `error` says the database could not be reached or went away.
    public func isUnavailable(_ error: any Error) -> Bool { Self.isUnavailable(error) }

    /// What went wrong, in PostgreSQL's words when the server answered (postgres-nio hides them from `description`
    /// so that logs never show query values by accident); other errors as they describe themselves.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] {
            return message + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }

    /// Whether any of `texts` holds U+0000, which PostgreSQL's text cannot: such a name or key is never stored, so a
    /// lookup by it finds nothing (rather than failing the statement).
    static func holdsNUL(_ texts: String...) -> Bool { texts.contains { $0.utf8.contains(0) } }

    /// Whether `error` says the database could not be reached or went away (a closed or failed connection, a server
    /// shutting down or not accepting connections yet): the request may succeed later, elsewhere.
    static func isUnavailable(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed: return true
        default:
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53100"].contains(state)
        }
    }

    /// Whether the database server's disk is full (SQLSTATE 53100, `disk_full`).
    public func isOutOfSpace(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "53100"
    }

    /// Whether a failed statement broke a unique constraint (SQLSTATE 23505).
    static func isUniqueViolation(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }
}
