import ArgumentParser
import CairnServer
import Foundation
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run a Cairn sync server.",
        discussion: """
            The server keeps its data (an SQLite database, later a files folder) in --data.
            Create projects and users first with `cairn admin --data DIR ...`.

            Example:
              cairn admin --data ./cairn-data add-project field
              cairn serve --data ./cairn-data --port 8080
            """)

    @Option(name: .long, help: "The data directory (created if missing).")
    var data: String = "./cairn-data"

    @Option(
        name: .long,
        help: "A PostgreSQL database for all server state and files, postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require] (or CAIRN_POSTGRES_URL); several servers may share it. Without it, --data is used.")
    var postgres: String?

    @Option(name: .long, help: "The address to listen on. Use 0.0.0.0 to accept other machines.")
    var host: String = "127.0.0.1"

    @Option(name: .long, help: "The port to listen on (0 picks a free one and prints it).")
    var port: Int = 8080

    @Option(name: .long, help: "Days to keep tombstones; clients whose cursor is older re-pull a snapshot.")
    var tombstoneDays: Double = 30

    @Option(name: .long, help: "Seconds between purges of old tombstones, operation results and tokens (0: never).")
    var purgeInterval: Double = 3600

    @Option(name: .long, help: "Minutes an access token lives.")
    var accessTokenMinutes: Double = 15

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(
        name: .long,
        help: "full: every acknowledged write is on disk before the answer (survives a power cut); normal: flushed at checkpoints (survives a server crash only, about 10% faster pushes).")
    var durability: String = "full"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard tombstoneDays > 0 else { throw ValidationError("--tombstone-days must be positive") }
        guard purgeInterval >= 0 else { throw ValidationError("--purge-interval cannot be negative") }
        guard accessTokenMinutes > 0 else { throw ValidationError("--access-token-minutes must be positive") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level \(logLevel) is not a level") }
        guard CommitDurability(rawValue: durability) != nil else { throw ValidationError("--durability is full or normal, not \(durability)") }
    }

    func run() async throws {
        var configuration = ServerConfiguration(dataDirectory: URL(fileURLWithPath: data))
        configuration.host = host
        configuration.port = port
        configuration.tombstoneRetention = tombstoneDays * 86400
        configuration.purgeInterval = purgeInterval
        configuration.accessTokenLifetime = accessTokenMinutes * 60
        configuration.durability = CommitDurability(rawValue: durability) ?? .full
        var logger = Logger(label: "cairn.server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        configuration.postgresURL = postgres ?? ProcessInfo.processInfo.environment["CAIRN_POSTGRES_URL"]
        let server = try await CLIError.wrap(configuration.postgresURL == nil ? "cannot open the data directory \(data)" : "cannot open the PostgreSQL database") {
            try await SyncServer.open(configuration: configuration, logger: logger)
        }
        let host = configuration.host
        let data = configuration.postgresURL == nil ? "data: \(self.data)" : "data: PostgreSQL"
        try await server.makeApplication { port in
            // A line on its own, flushed, so scripts can read the port when --port 0 was asked.
            FileHandle.standardOutput.write(Data("cairn server listening on http://\(host):\(port) (\(data))\n".utf8))
        }.runService()
    }
}
