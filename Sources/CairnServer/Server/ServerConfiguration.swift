import CairnProtocol
import Foundation

/// How a Cairn server runs. Every value has a default fit for production on one machine.
///
/// ```swift
/// var configuration = ServerConfiguration(dataDirectory: URL(filePath: "./cairn-data"))
/// configuration.port = 8080
/// ```
public struct ServerConfiguration: Sendable {
    /// Where the database and the files' bytes live.
    public var dataDirectory: URL
    /// The address to listen on.
    public var host: String = "127.0.0.1"
    /// The port to listen on; 0 picks a free one.
    public var port: Int = 8080
    /// Lifetime of access tokens (default 15 minutes).
    public var accessTokenLifetime: TimeInterval = 15 * 60
    /// Lifetime of refresh tokens (default 30 days).
    public var refreshTokenLifetime: TimeInterval = 30 * 24 * 3600
    /// How long tombstones are kept before they are purged (default 30 days); older cursors get `410 cursor_expired`.
    public var tombstoneRetention: TimeInterval = 30 * 24 * 3600
    /// How long operation results are remembered for idempotent replay (default 7 days; at least 24 hours).
    public var operationRetention: TimeInterval = 7 * 24 * 3600
    /// How often the purge runs (default hourly); 0 turns the timer off.
    public var purgeInterval: TimeInterval = 3600
    /// The bcrypt cost for new password hashes.
    public var bcryptCost: UInt8 = 10
    /// Failed logins per username and client address allowed within `loginFailureWindow` before further attempts
    /// from that address get `429`; ten times as many from all addresses together lock the name everywhere.
    public var maximumLoginFailures: Int = 5
    /// The window of `maximumLoginFailures`, in seconds.
    public var loginFailureWindow: TimeInterval = 300
    /// Largest batch body, in bytes.
    public var maximumBatchBytes: Int = BatchRequest.defaultMaximumBytes
    /// Most operations per batch.
    public var maximumBatchOperations: Int = BatchRequest.defaultMaximumOperations
    /// Seconds between keep-alive comments on live-notice streams.
    public var eventsHeartbeat: TimeInterval = 15
    /// The largest file a project takes, in bytes (default 1 GiB); `cairn admin limits` overrides it per project.
    public var maximumFileBytes: Int64 = 1 << 30
    /// The most bytes of `new` and `completed` files one project holds (default 20 GiB); overridable per project.
    public var maximumProjectFileBytes: Int64 = 20 << 30
    /// How long a `new` file waits for its bytes after creation or its last received chunk before the sweeper
    /// deletes it (default 24 hours).
    public var fileUploadExpiry: TimeInterval = 24 * 3600

    /// Sign-in through an identity provider (JWTs checked against its JWKS) beside Cairn's own tokens; `nil` (the
    /// default) accepts Cairn's tokens only.
    public var identityProvider: IdentityProviderConfiguration?

    /// How webhooks deliver: timeouts, backoff, leases (``WebhookSettings``).
    public var webhooks = WebhookSettings()

    /// gzip on the wire (the default): JSON answers are compressed for clients that send `Accept-Encoding: gzip`, and
    /// compressed JSON request bodies are read. `false` answers plain JSON and refuses compressed bodies with `415`.
    public var wireCompression = true

    /// When an acknowledged write is safe: `.full` (the default) waits for the disk at every commit.
    public var durability: CommitDurability = .full

    /// A PostgreSQL database (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...]`) that keeps all of the
    /// server's state, files included, so that several instances can serve it; `nil` (the default) keeps it in the
    /// data directory's SQLite database and files folder. See ``SyncServer/open(configuration:clock:timers:logger:)``.
    public var postgresURL: String?

    /// The backend these settings name: PostgreSQL when ``postgresURL`` is set, else SQLite in ``dataDirectory``
    /// with ``durability``.
    public var backend: ServerBackend {
        ServerBackend(dataDirectory: dataDirectory, postgresURL: postgresURL, durability: durability)
    }

    /// A configuration with every default, keeping its database (`cairn.sqlite`) in `dataDirectory`.
    public init(dataDirectory: URL) { self.dataDirectory = dataDirectory }

    /// The SQLite database file inside the data directory.
    public var databasePath: String { ServerBackend.databasePath(in: dataDirectory) }

    /// The folder of the files' bytes inside the data directory (one subfolder per project).
    public var filesDirectory: URL { ServerBackend.filesDirectory(in: dataDirectory) }
}
