import Logging
import PostgresNIO
import Synchronization
import CairnProtocol

/// The server's PostgreSQL connection pool: postgres-nio's client, counting the work that holds its connections so
/// that `GET /metrics` can show how busy the pool is, and bounding how long work waits for a connection.
///
/// postgres-nio's pool waits for ever for a connection while the database cannot be reached; here a lease that has
/// no connection after ``leaseTimeout`` (a statement: no answer after three) fails with `unavailable` (answered `503`
/// with `Retry-After`), so requests do not pile up during an outage. Work that has its connection runs as long as it
/// needs.
final class PostgresPool: Sendable {
    let client: PostgresClient
    /// The most connections the pool opens.
    let maximum: Int
    /// How long work waits for a connection.
    let leaseTimeout: Duration
    /// What the lease timeouts run on (the server's timers).
    let timers: any Clock<Duration>
    private let busy = Atomic<Int>(0)

    init(_ client: PostgresClient, maximum: Int, leaseTimeout: Duration = .seconds(10), timers: any Clock<Duration> = ContinuousClock()) {
        self.client = client
        self.maximum = maximum
        self.leaseTimeout = leaseTimeout
        self.timers = timers
    }

    /// Statements and leases running or waiting for a connection now.
    var inUse: Int { busy.load(ordering: .relaxed) }

    /// Runs one statement on a pooled connection (released when its rows are read); fails with `unavailable` when
    /// the statement has neither a connection nor a first answer within three lease timeouts. The statement is then
    /// cancelled and left to end on its own: a connection the database's restart cut can keep postgres-nio waiting
    /// for ever, and neither the request nor the server's shutdown may wait with it.
    @discardableResult
    func query(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        busy.add(1, ordering: .relaxed)
        defer { busy.subtract(1, ordering: .relaxed) }
        let client = self.client, timeout = leaseTimeout * 3
        let work = Task { try await client.query(query, logger: logger) }
        return try await Abandonable.value(of: work, within: timeout, timers: timers) {
            ErrorBody(code: .unavailable, message: "PostgreSQL did not answer within \(timeout); the database cannot be reached")
        }
    }

    /// Leases one connection for `body`.
    func withConnection<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        busy.add(1, ordering: .relaxed)
        defer { busy.subtract(1, ordering: .relaxed) }
        let client = self.client, timeout = leaseTimeout, timers = self.timers
        return try await withoutActuallyEscaping(body) { body in
            // Runs in the child task below while this task waits for it: never in two tasks at once.
            nonisolated(unsafe) let body = body
            let leased = LeaseFlag()
            return try await withThrowingTaskGroup(of: Result?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        leased.set()
                        return try await body(connection)
                    }
                }
                group.addTask {
                    try await timers.sleep(for: timeout)
                    guard leased.isSet else {
                        throw ErrorBody(code: .unavailable, message: "no PostgreSQL connection within \(timeout); the database cannot be reached")
                    }
                    return nil
                }
                while let next = try await group.next() {
                    if let value = next {
                        group.cancelAll()
                        return value
                    }
                }
                throw CancellationError()
            }
        }
    }

    /// Leases one connection for `body` inside `BEGIN` and `COMMIT` (`ROLLBACK` when it throws).
    func withTransaction<Result: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
        }
    }

    /// Set once a lease got its connection.
    private final class LeaseFlag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .relaxed) }
        var isSet: Bool { value.load(ordering: .relaxed) }
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
