import Foundation
import Logging

extension SyncServer {
    /// Opens the storage the configuration names (``ServerConfiguration/backend``: PostgreSQL for state and files
    /// when ``ServerConfiguration/postgresURL`` is set, else SQLite and a files folder in the data directory),
    /// migrating it first, and makes a server over it.
    ///
    /// ```swift
    /// var configuration = ServerConfiguration(dataDirectory: directory)
    /// configuration.postgresURL = "postgres://cairn@db.internal/cairn"
    /// let server = try await SyncServer.open(configuration: configuration)
    /// try await server.run()
    /// ```
    public static func open(
        configuration: ServerConfiguration, clock: any WallClock = SystemWallClock(), timers: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "cairn.server")
    ) async throws -> SyncServer {
        let opened = try await configuration.backend.open(logger: logger, timers: timers)
        do {
            return try SyncServer(
                configuration: configuration, storage: opened.storage, blobs: opened.blobs, clock: clock, timers: timers, logger: logger)
        } catch {
            try? await opened.storage.close()
            throw error
        }
    }
}
