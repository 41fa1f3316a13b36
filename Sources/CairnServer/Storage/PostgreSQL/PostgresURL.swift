import Foundation
import Logging
import NIOPosix
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL database is, as operators write it:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`.
///
/// ```swift
/// let configuration = try PostgresURL.configuration("postgres://cairn@127.0.0.1:5432/cairn?sslmode=disable")
/// ```
///
/// TLS follows libpq's `sslmode`: `prefer` (the default) uses TLS when the server offers it, `require` refuses a
/// server without it, `disable` never uses it. With `require` the server's certificate is checked.
enum PostgresURL {
    /// The client configuration the URL describes; `bad_request` with what is wrong otherwise.
    static func configuration(_ text: String) throws -> PostgresClient.Configuration {
        let parts = try Parts(text)
        let tls: PostgresClient.Configuration.TLS
        switch parts.mode {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(.makeClientConfiguration())
        case .require: tls = .require(.makeClientConfiguration())
        }
        return PostgresClient.Configuration(
            host: parts.host, port: parts.port, username: parts.user, password: parts.password, database: parts.database, tls: tls)
    }

    /// Connects once to the database `text` names, outside any pool, and closes: a pool retries a refused connection
    /// for ever, so a wrong URL or a database that is down must fail here, at once, with PostgreSQL's reason.
    static func probe(_ text: String, logger: Logger) async throws {
        let parts = try Parts(text)
        let tls: PostgresConnection.Configuration.TLS
        switch parts.mode {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        var configuration = PostgresConnection.Configuration(
            host: parts.host, port: parts.port, username: parts.user, password: parts.password, database: parts.database, tls: tls)
        configuration.options.connectTimeout = .seconds(10)
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 0, logger: logger)
        try? await connection.close()
    }

    /// The URL's parts, checked.
    struct Parts {
        enum Mode { case disable, prefer, require }
        var host: String
        var port: Int
        var user: String
        var password: String?
        var database: String
        var mode: Mode

        init(_ text: String) throws {
            guard let url = URLComponents(string: text), url.scheme == "postgres" || url.scheme == "postgresql" else {
                throw ErrorBody(code: .badRequest, message: "the PostgreSQL URL must look like postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
            }
            guard let host = url.host, !host.isEmpty else {
                throw ErrorBody(code: .badRequest, message: "the PostgreSQL URL names no host")
            }
            guard let user = url.user, !user.isEmpty else { throw ErrorBody(code: .badRequest, message: "the PostgreSQL URL names no user") }
            let database = String(url.path.drop { $0 == "/" })
            guard !database.isEmpty else { throw ErrorBody(code: .badRequest, message: "the PostgreSQL URL names no database") }
            let mode = url.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
            switch mode {
            case "disable": self.mode = .disable
            case "prefer", "allow": self.mode = .prefer
            case "require", "verify-ca", "verify-full": self.mode = .require
            default: throw ErrorBody(code: .badRequest, message: "sslmode \(mode) is not disable, prefer or require")
            }
            self.host = host
            self.port = url.port ?? 5432
            self.user = user.removingPercentEncoding ?? user
            self.password = url.password?.removingPercentEncoding
            self.database = database
        }
    }
}
