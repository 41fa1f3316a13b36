import CairnProtocol
import CairnServer
import Foundation
import Logging

/// A throwaway Cairn server for tests: an ``EmbeddedServer`` on a free loopback port with a temporary data
/// directory, fast password hashing and one known password.
///
/// ```swift
/// try await TestServer.withServer { server in
///     try await server.setUp(project: "field", schema: schema, users: ["alice": .writer])
///     // open clients against server.baseURL with TestServer.password
/// }
/// ```
public final class TestServer: Sendable {
    /// The embedded server: its listener can be closed and opened again for real network cuts.
    public let embedded: EmbeddedServer
    /// The clock the server reads.
    public let clock: any WallClock

    /// The password every user made by ``setUp(project:schema:users:)`` gets. Tests only: never ship it.
    public static let password = "correct-horse-battery"

    /// Starts a server; `configure` may change its configuration first. Its data goes to `dataDirectory` when given,
    /// else to a temporary directory that ``stop()`` removes; its log to `logger` when given, else nowhere.
    public static func start(
        clock: any WallClock = SystemWallClock(), dataDirectory: URL? = nil, logger: Logger? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let postgresURL = try storageFromEnvironment()
        let silent = Logger(label: "cairn.embedded") { _ in SwiftLogNoOpLogHandler() }
        let embedded = try await EmbeddedServer.start(dataDirectory: dataDirectory, clock: clock, logger: logger ?? silent) { configuration in
            configuration.bcryptCost = 4
            configuration.purgeInterval = 0
            configuration.postgresURL = postgresURL
            configure(&configuration)
        }
        return TestServer(embedded: embedded, clock: clock)
    }

    /// Runs `body` with a started server, and stops it (removing its data) however `body` ends.
    public static func withServer<T>(
        clock: any WallClock = SystemWallClock(), configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: (TestServer) async throws -> T
    ) async throws -> T {
        let server = try await start(clock: clock, configure: configure)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// `CAIRN_TEST_SERVER_STORAGE=postgres` runs every test server on a new database of the test process's
    /// PostgreSQL cluster (``PostgresCluster/shared()``) instead of SQLite, so one suite checks both backends.
    static func storageFromEnvironment() throws -> String? {
        switch ProcessInfo.processInfo.environment["CAIRN_TEST_SERVER_STORAGE"] ?? "sqlite" {
        case "sqlite": return nil
        case "postgres": return try PostgresCluster.shared().makeDatabase()
        case let other: throw PostgresCluster.ClusterError("CAIRN_TEST_SERVER_STORAGE is sqlite or postgres, not \(other)")
        }
    }

    init(embedded: EmbeddedServer, clock: any WallClock) {
        self.embedded = embedded
        self.clock = clock
    }

    /// The server, for direct access to storage and admin.
    public var server: SyncServer { embedded.server }
    /// The temporary data directory (removed by ``stop()``).
    public var directory: URL { embedded.dataDirectory }
    /// The free loopback port the server listens on, picked at start.
    public var port: Int { embedded.port }
    /// `http://127.0.0.1:PORT`.
    public var baseURL: URL { embedded.baseURL }

    /// Creates the project, sets its schema and creates each user with ``password`` and the given role.
    public func setUp(project: String, schema: Schema, users: [String: Role]) async throws {
        try await embedded.setUp(project: project, schema: schema)
        for (user, role) in users.sorted(by: { $0.key < $1.key }) {
            try await embedded.addUser(user, password: Self.password, role: role, project: project)
        }
    }

    /// Stops the server and deletes its data.
    public func stop() async { await embedded.stop() }
}
