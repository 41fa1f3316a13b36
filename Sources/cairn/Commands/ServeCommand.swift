import ArgumentParser
import CairnServer
import Foundation
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run a Cairn sync server.",
        discussion: """
            The server keeps its data (an SQLite database and a files folder) in --data, or everything in PostgreSQL \
            with --postgres, where several servers may share one database behind one address. \
            Create projects and users first with `cairn admin --data DIR ...` (or `--postgres URL`).

            Every option can also come from the environment: CAIRN_DATA, CAIRN_POSTGRES_URL, CAIRN_HOST, CAIRN_PORT, \
            CAIRN_TOMBSTONE_DAYS, CAIRN_PURGE_INTERVAL, CAIRN_ACCESS_TOKEN_MINUTES, CAIRN_LOG_LEVEL, CAIRN_DURABILITY, \
            CAIRN_COMPRESSION, CAIRN_JWKS, CAIRN_JWT_ISSUER, CAIRN_JWT_AUDIENCE, CAIRN_JWT_ROLES_CLAIM. A flag wins over its variable.

            With --jwks (and --jwt-issuer, --jwt-audience), users may also sign in with their company's identity \
            provider: requests carry its JWT as `Authorization: Bearer <JWT>`, beside Cairn's own tokens.

            Example:
              cairn admin --data ./cairn-data add-project field
              cairn serve --data ./cairn-data --port 8080
              CAIRN_POSTGRES_URL=postgres://cairn@db.internal/cairn \\
                CAIRN_HOST=0.0.0.0 cairn serve
              cairn serve --jwks https://login.example.com/.well-known/jwks.json \\
                --jwt-issuer https://login.example.com/ --jwt-audience cairn
            """)

    @Option(name: .long, help: "The data directory, created if missing (CAIRN_DATA; default ./cairn-data).")
    var data: String?

    @Option(
        name: .long,
        help: "A PostgreSQL database for all server state and files, postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require] (CAIRN_POSTGRES_URL); several servers may share it. Without it, --data is used.")
    var postgres: String?

    @Option(name: .long, help: "The address to listen on; 0.0.0.0 accepts other machines (CAIRN_HOST; default 127.0.0.1).")
    var host: String?

    @Option(name: .long, help: "The port to listen on; 0 picks a free one and prints it (CAIRN_PORT; default 8080).")
    var port: Int?

    @Option(name: .long, help: "Days to keep tombstones; clients whose cursor is older re-pull a snapshot (CAIRN_TOMBSTONE_DAYS; default 30).")
    var tombstoneDays: Double?

    @Option(name: .long, help: "Seconds between purges of old tombstones, operation results and tokens; 0: never (CAIRN_PURGE_INTERVAL; default 3600).")
    var purgeInterval: Double?

    @Option(name: .long, help: "Minutes an access token lives (CAIRN_ACCESS_TOKEN_MINUTES; default 15).")
    var accessTokenMinutes: Double?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical (CAIRN_LOG_LEVEL; default info).")
    var logLevel: String?

    @Option(
        name: .long,
        help: "full: every acknowledged write is on disk before the answer (survives a power cut); normal: flushed at checkpoints (survives a server crash only, about 10% faster pushes). SQLite only (CAIRN_DURABILITY; default full).")
    var durability: String?

    @Option(
        name: .long,
        help: "gzip: compress JSON answers for clients that accept it and read compressed JSON bodies; off: plain JSON only, compressed bodies refused with 415 (CAIRN_COMPRESSION; default gzip).")
    var compression: String?

    @Option(
        name: .long,
        help: "The identity provider's signing keys, a JWKS at an http(s) URL (cached, fetched again on an unknown kid) or in a file read at start (CAIRN_JWKS). Needs --jwt-issuer and --jwt-audience.")
    var jwks: String?

    @Option(name: .long, help: "The issuer (iss) the identity provider's tokens must carry (CAIRN_JWT_ISSUER).")
    var jwtIssuer: String?

    @Option(name: .long, help: "The audience (aud) the identity provider's tokens must include (CAIRN_JWT_AUDIENCE).")
    var jwtAudience: String?

    @Option(
        name: .long,
        help: "The claim of the identity provider's tokens that gives Cairn roles, {\"projects\": {\"PROJECT\": \"reader|writer|admin\"}}; without it in a token, roles come from the members table (CAIRN_JWT_ROLES_CLAIM; default cairn).")
    var jwtRolesClaim: String?

    /// The options as given, else from the environment, else their defaults; checked.
    struct Settings {
        var data: String
        var postgres: String?
        var host: String
        var port: Int
        var tombstoneDays: Double
        var purgeInterval: Double
        var accessTokenMinutes: Double
        var logLevel: Logger.Level
        var durability: CommitDurability
        var wireCompression: Bool
        var identityProvider: IdentityProviderConfiguration?
    }

    func settings(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Settings {
        func value<T: LosslessStringConvertible>(_ flag: T?, _ variable: String, _ fallback: T) throws -> T {
            if let flag { return flag }
            guard let text = environment[variable], !text.isEmpty else { return fallback }
            guard let parsed = T(text) else { throw ValidationError("\(variable)=\(text) is not a valid value") }
            return parsed
        }
        let level = try value(logLevel, "CAIRN_LOG_LEVEL", "info")
        let mode = try value(durability, "CAIRN_DURABILITY", "full")
        let coding = try value(compression, "CAIRN_COMPRESSION", "gzip")
        guard coding == "gzip" || coding == "off" else { throw ValidationError("compression is gzip or off, not \(coding)") }
        let settings = Settings(
            data: try value(data, "CAIRN_DATA", "./cairn-data"),
            postgres: PostgresDatabase.url(postgres, environment: environment),
            host: try value(host, "CAIRN_HOST", "127.0.0.1"), port: try value(port, "CAIRN_PORT", 8080),
            tombstoneDays: try value(tombstoneDays, "CAIRN_TOMBSTONE_DAYS", 30), purgeInterval: try value(purgeInterval, "CAIRN_PURGE_INTERVAL", 3600),
            accessTokenMinutes: try value(accessTokenMinutes, "CAIRN_ACCESS_TOKEN_MINUTES", 15),
            logLevel: try Logger.Level(rawValue: level).orThrow(ValidationError("log level \(level) is not a level")),
            durability: try CommitDurability(rawValue: mode).orThrow(ValidationError("durability is full or normal, not \(mode)")),
            wireCompression: coding == "gzip",
            identityProvider: try identityProvider(value))
        guard (0...65535).contains(settings.port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard settings.tombstoneDays > 0 else { throw ValidationError("tombstone days must be positive") }
        guard settings.purgeInterval >= 0 else { throw ValidationError("the purge interval cannot be negative") }
        guard settings.accessTokenMinutes > 0 else { throw ValidationError("access token minutes must be positive") }
        return settings
    }

    /// The identity provider the options name, or `nil` without --jwks; the issuer and audience are required with it.
    private func identityProvider(_ value: (String?, String, String) throws -> String) throws -> IdentityProviderConfiguration? {
        let jwks = try value(self.jwks, "CAIRN_JWKS", "")
        let issuer = try value(jwtIssuer, "CAIRN_JWT_ISSUER", "")
        let audience = try value(jwtAudience, "CAIRN_JWT_AUDIENCE", "")
        let rolesClaim = try value(jwtRolesClaim, "CAIRN_JWT_ROLES_CLAIM", "cairn")
        guard !jwks.isEmpty else {
            guard issuer.isEmpty, audience.isEmpty else { throw ValidationError("--jwt-issuer and --jwt-audience need --jwks (CAIRN_JWKS)") }
            return nil
        }
        guard !issuer.isEmpty else { throw ValidationError("--jwks needs --jwt-issuer (CAIRN_JWT_ISSUER): the iss the identity provider's tokens carry") }
        guard !audience.isEmpty else { throw ValidationError("--jwks needs --jwt-audience (CAIRN_JWT_AUDIENCE): the aud the identity provider's tokens carry for Cairn") }
        guard !rolesClaim.isEmpty else { throw ValidationError("--jwt-roles-claim cannot be empty") }
        return IdentityProviderConfiguration(jwks: jwks, issuer: issuer, audience: audience, rolesClaim: rolesClaim)
    }

    func validate() throws { _ = try settings() }

    func run() async throws {
        let settings = try settings()
        var configuration = ServerConfiguration(dataDirectory: URL(fileURLWithPath: settings.data))
        configuration.host = settings.host
        configuration.port = settings.port
        configuration.tombstoneRetention = settings.tombstoneDays * 86400
        configuration.purgeInterval = settings.purgeInterval
        configuration.accessTokenLifetime = settings.accessTokenMinutes * 60
        configuration.durability = settings.durability
        configuration.wireCompression = settings.wireCompression
        configuration.postgresURL = settings.postgres
        configuration.identityProvider = settings.identityProvider
        var logger = Logger(label: "cairn.server")
        logger.logLevel = settings.logLevel
        let server: SyncServer
        do {
            server = try await SyncServer.open(configuration: configuration, logger: logger)
        } catch let error as JWKSError {
            throw CLIError("cannot use the identity provider's keys (--jwks): \(error)")
        } catch {
            let context = settings.postgres == nil ? "cannot open the data directory \(settings.data)" : "cannot open the PostgreSQL database"
            throw CLIError("\(context): \(CLIError.describe(error))")
        }
        let host = configuration.host
        let data = settings.postgres == nil ? "data: \(settings.data)" : "data: PostgreSQL"
        try await server.makeApplication { port in
            // A line on its own, flushed, so scripts can read the port when --port 0 was asked.
            FileHandle.standardOutput.write(Data("cairn server listening on http://\(host):\(port) (\(data))\n".utf8))
            FileHandle.standardOutput.write(Data("operators' console: http://\(host):\(port)/console/\n".utf8))
        }.runService()
    }
}

extension Optional {
    /// The value, or `error` thrown.
    fileprivate func orThrow(_ error: @autoclosure () -> any Error) throws -> Wrapped {
        guard let self else { throw error() }
        return self
    }
}
