import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Testing

/// A server on a database of its own on the test process's PostgreSQL cluster, SDK clients against it, and plain
/// SQL sessions on the same database, as other software opens them: for collections kept in tables.
struct TableHarness: Sendable {
    let server: TestServer
    /// The database's URL (`?sslmode=disable`).
    let url: String
    static let project = "field"

    /// Whether these tests run here: PostgreSQL is needed, and they run once, in the plain client run (the encrypted
    /// and URLSession runs of the client suite change nothing on the server side they check).
    static func available(_ what: String) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        if environment["CAIRN_TEST_ENCRYPTED_STORES"] == "1" || environment["CAIRN_TEST_TRANSPORT"] != nil {
            print("skipping \(what): table collections are checked in the plain client run")
            return false
        }
        return PostgresCluster.isAvailable(for: what)
    }

    /// Starts a server on a new database of `cluster` (the shared one by default) with `schema` and writers
    /// `alice`, `bob` and `carl`, runs `body`, and stops it.
    static func with(
        schema: Schema, cluster: PostgresCluster? = nil, url: String? = nil, _ body: (TableHarness) async throws -> Void
    ) async throws {
        let url = try url ?? (cluster ?? PostgresCluster.shared()).makeDatabase()
        let server = try await TestServer.start { $0.postgresURL = url }
        let harness = TableHarness(server: server, url: url)
        try await withCleanup({ await stop(server) }) {
            try await server.setUp(project: project, schema: schema, users: ["alice": .writer, "bob": .writer, "carl": .writer])
            try await body(harness)
        }
    }

    /// Stops `server`; after 60 s stops waiting and removes its data directory itself. An in-process server on
    /// PostgreSQL whose database restarted under it can wait for ever to stop (with or without table collections:
    /// a known fault of the shutdown, not what these tests check), and a test must not hang on it.
    static func stop(_ server: TestServer) async {
        if case .failure = await attempt(within: .seconds(60), { await server.stop() }) {
            print("a server on PostgreSQL did not stop within 60 s after its database restarted; its data directory is removed without it")
            try? FileManager.default.removeItem(at: server.directory)
        }
    }

    /// `body`'s outcome, or a failure when it has not ended within `limit` (it is cancelled and left to end alone):
    /// for work a database restart can keep waiting for ever.
    static func attempt(within limit: Duration, _ body: @escaping @Sendable () async throws -> Void) async -> Result<Void, any Error> {
        let (outcomes, outcome) = AsyncStream<Result<Void, any Error>>.makeStream()
        let work = Task {
            do {
                try await body()
                outcome.yield(.success(()))
            } catch {
                outcome.yield(.failure(error))
            }
        }
        let timer = Task {
            try await Task.sleep(for: limit)
            outcome.yield(.failure(CancellationError()))
        }
        defer {
            work.cancel()
            timer.cancel()
        }
        for await result in outcomes { return result }
        return .failure(CancellationError())
    }

    /// An SDK client signed in as `user`, its store in memory.
    func client(_ user: String, device: String? = nil) async throws -> CairnClient {
        var configuration = CairnConfiguration(
            serverURL: server.baseURL, project: Self.project, device: device ?? "device-\(user)",
            credentials: .password(user: user, password: TestServer.password), store: .inMemory)
        configuration.retry = RetryPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(50), maximumAttempts: 3)
        return try await CairnClient.open(configuration, transport: TestTransport.defaultTransport(connectTimeout: configuration.connectTimeout))
    }

    /// Runs `body` on a new SQL session of the database (another program's connection, with `search_path` set to
    /// `searchPath` when given), closed afterwards.
    func sql<T: Sendable>(searchPath: String? = nil, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let components = try #require(URLComponents(string: url))
        let configuration = PostgresConnection.Configuration(
            host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "cairn", password: nil,
            database: String(components.path.dropFirst()), tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Logger(label: "sql-session"))
        do {
            if let searchPath { try await connection.query(PostgresQuery(unsafeSQL: "SET search_path = \(searchPath)"), logger: Self.logger) }
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            // A connection a database restart cut may never answer a close: let it go on its own.
            Task { try? await connection.close() }
            throw error
        }
    }

    /// Runs statements, one after the other, on a new session.
    func execute(_ statements: String..., searchPath: String? = nil) async throws {
        try await sql(searchPath: searchPath) { connection in
            for statement in statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Self.logger) }
        }
    }

    /// The rows of `table` as JSON objects by id, each column of `columns` as Cairn stores it (a NULL left out).
    func rows(of table: String, columns: [String]) async throws -> [String: [String: JSONValue]] {
        let object = "jsonb_strip_nulls(jsonb_build_object(" + columns.map { "'\($0)', \"\($0)\"" }.joined(separator: ", ") + "))::text"
        return try await sql { connection in
            var rows: [String: [String: JSONValue]] = [:]
            for try await (id, text) in try await connection.query(PostgresQuery(unsafeSQL: "SELECT id, \(object) FROM \(table)"), logger: Self.logger)
                .decode((String, String).self)
            {
                rows[id] = try JSONValue(parsing: Array(text.utf8)).objectValue ?? [:]
            }
            return rows
        }
    }

    /// The single text value `query` returns.
    func value(_ query: String) async throws -> String? {
        try await sql { connection in
            for try await value in try await connection.query(PostgresQuery(unsafeSQL: query), logger: Self.logger).decode(String?.self) { return value }
            return nil
        }
    }

    /// The changes of `collection` after `since` as `user` reads them over HTTP, every page, and the last cursor.
    func feed(_ user: String, _ collection: String, since: String? = nil, limit: Int = 500) async throws -> (changes: [Change], cursor: String) {
        let http = TestHTTPClient(baseURL: server.baseURL)
        let token = try await http.login(user).accessToken
        var cursor = since
        var changes: [Change] = []
        while true {
            var path = "/v1/projects/\(Self.project)/collections/\(collection)/changes?limit=\(limit)"
            if let cursor { path += "&since=\(PercentEncoding.encode(cursor))" }
            let reply = try await http.send(.GET, path, token: token)
            #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
            let page = try reply.decode(ChangesPage.self)
            changes += page.changes
            cursor = page.cursor
            if !page.hasMore { return (changes, page.cursor) }
        }
    }

    /// A client's live records of `collection`, by id.
    static func local(_ client: CairnClient, _ collection: String) throws -> [String: [String: JSONValue]] {
        Dictionary(uniqueKeysWithValues: try client.records(Query(collection)).map { ($0.id, $0.data) })
    }

    static let logger = Logger(label: "cairn.tests.tables")
}

/// The error code and the field named by `body`'s failure (`nil` when it succeeds).
func refusal(_ body: () async throws -> Void) async -> (code: ErrorCode, field: String?)? {
    do {
        try await body()
        return nil
    } catch let error as ErrorBody {
        return (error.code, error.details?["field"]?.stringValue)
    } catch {
        return (.internalError, "\(error)")
    }
}
