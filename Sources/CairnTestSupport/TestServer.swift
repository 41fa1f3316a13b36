import CairnProtocol
import CairnServer
import Foundation
import Logging

/// A real Cairn server on a free loopback port with a temporary data directory, for tests, the demo and benchmarks.
///
/// ```swift
/// let server = try await TestServer.start()
/// try await server.setUp(project: "field", schema: schema, users: ["alice": .writer])
/// defer { await server.stop() }
/// ```
public final class TestServer: Sendable {
    /// The server, for direct access to storage and admin.
    public let server: SyncServer
    /// The running HTTP listener.
    public let running: RunningServer
    /// The temporary data directory (removed by ``stop()``).
    public let directory: URL
    /// The clock the server reads; a ``ManualWallClock`` unless one was given.
    public let clock: any WallClock

    /// The password every user made by ``setUp(project:schema:users:)`` gets.
    public static let password = "correct-horse-battery"

    /// Starts a server; `configure` may change its configuration first.
    public static func start(
        clock: any WallClock = SystemWallClock(), configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-test-\(UUID().uuidString)")
        var configuration = ServerConfiguration(dataDirectory: directory)
        configuration.port = 0
        configuration.bcryptCost = 4
        configuration.purgeInterval = 0
        configure(&configuration)
        let server = try SyncServer(configuration: configuration, clock: clock, logger: .init(label: "cairn.test") { _ in SwiftLogNoOpLogHandler() })
        let running = try await server.start()
        return TestServer(server: server, running: running, directory: directory, clock: clock)
    }

    init(server: SyncServer, running: RunningServer, directory: URL, clock: any WallClock) {
        self.server = server
        self.running = running
        self.directory = directory
        self.clock = clock
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: URL { running.baseURL }

    /// Creates the project, sets its schema and creates each user with ``password`` and the given role.
    public func setUp(project: String, schema: Schema, users: [String: Role]) async throws {
        let admin = server.admin
        try await admin.addProject(project)
        try await admin.setSchema(project: project, schema)
        for (user, role) in users.sorted(by: { $0.key < $1.key }) {
            if try await server.storage.user(named: user) == nil {
                try await admin.addUser(user, password: Self.password)
            }
            try await admin.grant(user: user, project: project, role: role)
        }
    }

    /// Stops the server and deletes its data.
    public func stop() async {
        await running.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
