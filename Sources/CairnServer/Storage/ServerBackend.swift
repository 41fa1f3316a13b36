import CairnProtocol
import Foundation
import Logging

/// Where a server keeps its state and its files' bytes. `cairn serve`, `cairn admin` and `cairn admin migrate` all
/// name one and ``open(logger:timers:)`` it, so the choice between backends is made here and nowhere else.
///
/// ```swift
/// let opened = try await ServerBackend.postgres(url: "postgres://cairn@db.internal/cairn").open()
/// let admin = ServerAdmin(storage: opened.storage)
/// ```
public enum ServerBackend: Sendable, Hashable {
    /// An SQLite database (`cairn.sqlite`) and a `files` folder in a data directory, created if missing.
    case sqlite(dataDirectory: URL, durability: CommitDurability = .full)
    /// A PostgreSQL database (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...]`) that keeps
    /// everything, files' bytes included, so that several instances can serve it.
    case postgres(url: String)

    /// The backend a server's settings name: the PostgreSQL database when a URL is given, else the data directory.
    /// `cairn serve` (through ``ServerConfiguration/backend``) and `cairn admin` both decide here.
    public init(dataDirectory: URL, postgresURL: String?, durability: CommitDurability = .full) {
        self = postgresURL.map { .postgres(url: $0) } ?? .sqlite(dataDirectory: dataDirectory, durability: durability)
    }

    /// A storage and the blob store that goes with it, open.
    public struct Opened: Sendable {
        /// The server's state.
        public let storage: any ServerStorage
        /// Its files' bytes.
        public let blobs: any BlobStore
    }

    /// Opens (migrating) the storage and its blob store. `timers` bounds PostgreSQL's waits (tests pass a manual clock).
    public func open(
        logger: Logger = Logger(label: "cairn.storage"), timers: any Clock<Duration> = ContinuousClock()
    ) async throws -> Opened {
        switch self {
        case .sqlite: return try openNow()
        case .postgres(let url):
            let storage = try await PostgresStorage(url: url, logger: logger, timers: timers)
            return Opened(storage: storage, blobs: PostgresBlobStore(storage: storage))
        }
    }

    /// Opens a backend that needs no connection (SQLite) at once; throws for one that does (PostgreSQL: use
    /// ``open(logger:timers:)``).
    public func openNow() throws -> Opened {
        switch self {
        case .sqlite(let directory, let durability):
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let storage = try SQLiteStorage(path: Self.databasePath(in: directory), durability: durability)
            return Opened(storage: storage, blobs: DirectoryBlobStore(root: Self.filesDirectory(in: directory)))
        case .postgres:
            throw ErrorBody(code: .internalError, message: "a PostgreSQL backend connects first: open it with `open()`")
        }
    }

    /// Throws `not_found` when the backend holds no server yet (an SQLite data directory without its database);
    /// opening would create an empty one. A PostgreSQL database is checked when it is opened.
    func checkExists() throws {
        guard case .sqlite(let directory, _) = self else { return }
        let path = Self.databasePath(in: directory)
        guard FileManager.default.fileExists(atPath: path) else {
            throw ErrorBody(code: .notFound, message: "\(path) does not exist: \(directory.path) is not a server's data directory")
        }
    }

    /// The SQLite database file inside a data directory.
    static func databasePath(in directory: URL) -> String { directory.appendingPathComponent("cairn.sqlite").path }

    /// The folder of the files' bytes inside a data directory (one subfolder per project).
    static func filesDirectory(in directory: URL) -> URL { directory.appendingPathComponent("files", isDirectory: true) }
}
