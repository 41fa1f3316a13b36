import CairnTesting
import Foundation
import Logging
import PostgresNIO
import Testing

@testable import CairnServer

/// The PostgreSQL backend's tables: versioned migrations that several instances may run at once.
@Suite("PostgreSQL: a throwaway cluster and the server's migrations", .serialized)
struct PostgresMigrationsTests {
    static let logger = Logger(label: "cairn.tests.postgres")

    /// Runs `body` with clients of a fresh cluster, each client running as PostgresNIO requires; prints why and
    /// returns when this machine has no PostgreSQL.
    static func withCluster(clients count: Int, _ body: ([PostgresClient]) async throws -> Void) async throws {
        guard PostgresCluster.isAvailable(for: "the PostgreSQL tests") else { return }
        let cluster = try PostgresCluster.start()
        defer { cluster.stop() }
        let configuration = try PostgresURL.configuration(cluster.url + "?sslmode=disable")
        let clients = (0..<count).map { _ in PostgresClient(configuration: configuration) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in clients { group.addTask { await client.run() } }
            defer { group.cancelAll() }
            try await body(clients)
        }
    }

    @Test("three instances migrating at once apply each migration once; a later start applies nothing")
    func concurrentMigrations() async throws {
        try await Self.withCluster(clients: 3) { clients in
            let results = try await withThrowingTaskGroup(of: [Int].self) { group in
                for client in clients { group.addTask { try await PostgresMigrations.migrate(PostgresPool(client, maximum: 20), logger: Self.logger) } }
                return try await group.reduce(into: [[Int]]()) { $0.append($1) }
            }
            let every = PostgresMigrations.all.map(\.version)
            #expect(results.filter { !$0.isEmpty } == [every])
            #expect(results.filter(\.isEmpty).count == 2)
            #expect(try await PostgresMigrations.appliedVersions(PostgresPool(clients[0], maximum: 20), logger: Self.logger) == every)
            #expect(try await PostgresMigrations.migrate(PostgresPool(clients[1], maximum: 20), logger: Self.logger) == [])

            var tables: Set<String> = []
            let rows = try await clients[2].query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
            for try await name in rows.decode(String.self) { tables.insert(name) }
            for table in ["users", "tokens", "projects", "members", "records", "collection_state", "operations", "clients", "files",
                          "file_limits", "file_chunks", "login_failures", "sign_in_revocations", "cairn_migrations"] {
                #expect(tables.contains(table), "missing table \(table)")
            }
        }
    }

    @Test("PostgreSQL URLs: user, password, host, port, database and sslmode; clear errors otherwise")
    func urls() throws {
        let configuration = try PostgresURL.configuration("postgres://cairn:s%40cret@db.example.com:6543/field?sslmode=require")
        #expect(configuration.host == "db.example.com")
        #expect(configuration.port == 6543)
        #expect(configuration.username == "cairn")
        #expect(configuration.password == "s@cret")
        #expect(configuration.database == "field")
        #expect(try PostgresURL.configuration("postgresql://u@h/d").port == 5432)
        for bad in ["mysql://u@h/d", "postgres://h/d", "postgres://u@h", "postgres://u@h/d?sslmode=sometimes", "not a url"] {
            #expect(throws: (any Error).self, "\(bad)") { try PostgresURL.configuration(bad) }
        }
    }
}
