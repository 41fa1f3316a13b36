import Logging
import PostgresNIO
import Synchronization

/// The server's PostgreSQL connection pool: postgres-nio's client, counting the work that holds its connections so
/// that `GET /metrics` can show how busy the pool is.
final class PostgresPool: Sendable {
    let client: PostgresClient
    /// The most connections the pool opens.
    let maximum: Int
    private let busy = Atomic<Int>(0)

    init(_ client: PostgresClient, maximum: Int) {
        self.client = client
        self.maximum = maximum
    }

    /// Statements and leases running or waiting for a connection now.
    var inUse: Int { busy.load(ordering: .relaxed) }

    /// Runs one statement on a pooled connection.
    @discardableResult
    func query(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        busy.add(1, ordering: .relaxed)
        defer { busy.subtract(1, ordering: .relaxed) }
        return try await client.query(query, logger: logger)
    }

    /// Leases one connection for `body`.
    func withConnection<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        busy.add(1, ordering: .relaxed)
        defer { busy.subtract(1, ordering: .relaxed) }
        return try await client.withConnection(body)
    }

    /// Leases one connection for `body` inside `BEGIN` and `COMMIT` (`ROLLBACK` when it throws).
    func withTransaction<Result: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        busy.add(1, ordering: .relaxed)
        defer { busy.subtract(1, ordering: .relaxed) }
        return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
    }
}

/// How busy a storage's connection pool is (see ``ServerStorage/poolUsage``).
public struct PoolUsage: Sendable, Hashable {
    /// Connections held by running work now.
    public var inUse: Int
    /// The most connections the pool opens.
    public var maximum: Int

    /// A usage of these values.
    public init(inUse: Int, maximum: Int) {
        self.inUse = inUse
        self.maximum = maximum
    }
}
