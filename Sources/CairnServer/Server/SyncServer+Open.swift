import Foundation
import Logging

extension SyncServer {
    /// Opens the storage the configuration names and makes a server over it: PostgreSQL (state and files) when
    /// ``ServerConfiguration/postgresURL`` is set, migrating it first, else SQLite and a files folder in the data
    /// directory.
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
        guard let url = configuration.postgresURL else {
            return try SyncServer(configuration: configuration, clock: clock, timers: timers, logger: logger)
        }
        let storage = try await PostgresStorage(url: url, logger: logger, timers: timers)
        do {
            return try SyncServer(
                configuration: configuration, storage: storage, blobs: PostgresBlobStore(storage: storage), clock: clock, timers: timers,
                logger: logger)
        } catch {
            await storage.close()
            throw error
        }
    }
}
