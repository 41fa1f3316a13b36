import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// A whole Cairn server inside the calling process, on a free loopback port, with its data in a temporary
/// directory (or one you give): for demos, benchmarks, tools and tests.
///
/// Its listener can be closed and opened again on the same port, so clients meet a real network cut: their
/// connections are refused until it listens again.
///
/// ```swift
/// let server = try await EmbeddedServer.start()
/// try await server.setUp(project: "field", schema: schema)
/// try await server.addUser("alice", password: password, role: .writer, project: "field")
/// await server.stopListening()        // clients are offline now
/// try await server.startListening()   // and back
/// await server.stop()                 // the temporary data is removed
/// ```
public final class EmbeddedServer: Sendable {
    /// The server, for its storage and admin.
    public let server: SyncServer
    /// Where the server keeps its data.
    public let dataDirectory: URL
    /// The port the server listens on, kept across ``stopListening()`` and ``startListening()``.
    public let port: Int
    private let removesData: Bool
    private let running: Mutex<RunningServer?>
    /// The storage runs for the embedded server's whole life, across listener stops and starts.
    private let storageGroup: ServiceGroup
    private let storageTask: Task<Void, any Error>

    private init(
        server: SyncServer, dataDirectory: URL, removesData: Bool, running: RunningServer, storageGroup: ServiceGroup,
        storageTask: Task<Void, any Error>
    ) {
        self.server = server
        self.dataDirectory = dataDirectory
        self.removesData = removesData
        self.port = running.port
        self.running = Mutex(running)
        self.storageGroup = storageGroup
        self.storageTask = storageTask
    }

    /// Starts a server on a free port of `host` (loopback by default).
    ///
    /// - Parameters:
    ///   - dataDirectory: where the data lives; by default a new temporary directory that ``stop()`` removes.
    ///   - clock: where the server reads the time.
    ///   - timers: what the server's timers wait on (purge, heartbeats, grace).
    ///   - logger: the server's logger; silent by default.
    ///   - configure: changes to the configuration before the server starts (port 0 and the data directory are set).
    public static func start(
        dataDirectory: URL? = nil, clock: any WallClock = SystemWallClock(), timers: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "cairn.embedded") { _ in SwiftLogNoOpLogHandler() },
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> EmbeddedServer {
        let directory = dataDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("cairn-server-\(UUID().uuidString)")
        var configuration = ServerConfiguration(dataDirectory: directory)
        configuration.port = 0
        configure(&configuration)
        let server = try await SyncServer.open(configuration: configuration, clock: clock, timers: timers, logger: logger)
        let storageGroup = ServiceGroup(configuration: .init(services: [server.storage], gracefulShutdownSignals: [], logger: logger))
        let storageTask = Task { try await storageGroup.run() }
        let running: RunningServer
        do {
            running = try await server.start(port: nil, runsStorage: false)
        } catch {
            await storageGroup.triggerGracefulShutdown()
            _ = await storageTask.result
            throw error
        }
        return EmbeddedServer(
            server: server, dataDirectory: directory, removesData: dataDirectory == nil, running: running, storageGroup: storageGroup,
            storageTask: storageTask)
    }

    /// `http://HOST:PORT`.
    public var baseURL: URL { URL(string: "http://\(server.configuration.host):\(port)")! }

    /// Whether the listener is open.
    public var isListening: Bool { running.withLock { $0 != nil } }

    /// Closes the listener: new connections to ``port`` are refused until ``startListening()``. Data stays.
    public func stopListening() async {
        guard let current = running.withLock({ current -> RunningServer? in
            defer { current = nil }
            return current
        }) else { return }
        await current.stop()
    }

    /// Listens again on the same port, over the same data.
    public func startListening() async throws {
        guard !isListening else { return }
        let started = try await server.start(port: port, runsStorage: false)
        running.withLock { $0 = started }
    }

    /// Creates a project (if it does not exist yet) and sets its schema.
    public func setUp(project: String, schema: Schema) async throws {
        let admin = server.admin
        if try await server.storage.schema(project: project) == nil { try await admin.addProject(project) }
        _ = try await admin.setSchema(project: project, schema)
    }

    /// Creates a user (if missing) with `password` and gives them `role` in `project`.
    public func addUser(_ name: String, password: String, role: Role, project: String) async throws {
        let admin = server.admin
        if try await server.storage.user(named: name) == nil { try await admin.addUser(name, password: password) }
        try await admin.grant(user: name, project: project, role: role)
    }

    /// Stops the server and closes its storage; removes its data when it made the temporary directory itself.
    public func stop() async {
        await stopListening()
        await storageGroup.triggerGracefulShutdown()
        _ = await storageTask.result
        if removesData { try? FileManager.default.removeItem(at: dataDirectory) }
    }
}
