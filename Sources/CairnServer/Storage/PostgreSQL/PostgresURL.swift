import Foundation
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
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable": tls = .disable
        case "prefer", "allow": tls = .prefer(.makeClientConfiguration())
        case "require", "verify-ca", "verify-full": tls = .require(.makeClientConfiguration())
        default: throw ErrorBody(code: .badRequest, message: "sslmode \(mode) is not disable, prefer or require")
        }
        return PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user.removingPercentEncoding ?? user,
            password: url.password?.removingPercentEncoding, database: database, tls: tls)
    }
}
