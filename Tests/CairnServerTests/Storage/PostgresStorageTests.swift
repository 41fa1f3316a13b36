import CairnProtocol
import CairnTesting
import Foundation
import Testing

@testable import CairnServer

/// The PostgreSQL backend's parts so far, against a throwaway cluster (skipped with a printed reason without one).
@Suite("PostgreSQL: the storage's accounts and tokens", .serialized)
struct PostgresStorageTests {
    /// Runs `body` with a storage on a fresh cluster; prints why and returns when this machine has no PostgreSQL.
    static func withStorage(_ body: (PostgresStorage) async throws -> Void) async throws {
        if let reason = PostgresCluster.unavailableReason {
            print("skipped: the PostgreSQL tests need a local PostgreSQL: \(reason)")
            return
        }
        let cluster = try PostgresCluster.start()
        defer { cluster.stop() }
        let storage = try await PostgresStorage(url: cluster.url + "?sslmode=disable")
        do {
            try await body(storage)
        } catch {
            await storage.close()
            throw error
        }
        await storage.close()
    }

    static func code(_ body: () async throws -> Void) async -> ErrorCode? {
        do {
            try await body()
            return nil
        } catch let error as ErrorBody {
            return error.code
        } catch {
            return "other"
        }
    }

    @Test("users: created once, a taken name is already_exists, an unknown one not_found")
    func users() async throws {
        try await Self.withStorage { storage in
            try await storage.createUser(name: "alice", passwordHash: "h1")
            #expect(await Self.code { try await storage.createUser(name: "alice", passwordHash: "h2") } == .alreadyExists)
            #expect(try await storage.user(named: "alice") == StoredUser(name: "alice", passwordHash: "h1"))
            try await storage.setPasswordHash(user: "alice", passwordHash: "h3")
            #expect(try await storage.user(named: "alice")?.passwordHash == "h3")
            #expect(await Self.code { try await storage.setPasswordHash(user: "nobody", passwordHash: "x") } == .notFound)
            #expect(try await storage.user(named: "nobody") == nil)
        }
    }

    @Test("tokens: read back whole; of twenty refreshes at once exactly one consumes it; a family is revoked together")
    func tokens() async throws {
        try await Self.withStorage { storage in
            try await storage.createUser(name: "alice", passwordHash: "h")
            let expires = Date(timeIntervalSince1970: 1_900_000_000.5)
            let refresh = StoredToken(hash: "r1", kind: .refresh, user: "alice", family: "f1", expiresAt: expires)
            let access = StoredToken(hash: "a1", kind: .access, user: "alice", family: "f1", expiresAt: expires)
            try await storage.insertToken(refresh)
            try await storage.insertToken(access)
            #expect(try await storage.token(hash: "r1") == refresh)
            #expect(try await storage.token(hash: "none") == nil)
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<20 { group.addTask { try await storage.consumeRefreshToken(hash: "r1") } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
            #expect(try await storage.consumeRefreshToken(hash: "a1") == false)
            try await storage.revokeTokenFamily("f1")
            #expect(try await storage.token(hash: "a1")?.revoked == true)
            #expect(try await storage.token(hash: "r1")?.revoked == true)
            #expect(try await storage.token(hash: "r1")?.used == true)
        }
    }
}

extension PostgresStorageTests {
    @Test("projects and members: created once, granted and re-granted, listed by name; the schema round-trips")
    func projects() async throws {
        try await Self.withStorage { storage in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            try await storage.createUser(name: "alice", passwordHash: "h")
            try await storage.createProject(name: "field", now: now)
            try await storage.createProject(name: "audit", now: now)
            #expect(await Self.code { try await storage.createProject(name: "field", now: now) } == .alreadyExists)
            #expect(try await storage.schema(project: "field")?.collections == [])
            #expect(try await storage.schema(project: "nope") == nil)

            try await storage.grant(user: "alice", project: "field", role: .writer)
            try await storage.grant(user: "alice", project: "field", role: .admin)
            try await storage.grant(user: "alice", project: "audit", role: .reader)
            #expect(try await storage.role(user: "alice", project: "field") == .admin)
            #expect(try await storage.role(user: "bob", project: "field") == nil)
            #expect(try await storage.memberships(user: "alice").map(\.name) == ["audit", "field"])
            #expect(await Self.code { try await storage.grant(user: "bob", project: "field", role: .reader) } == .notFound)
            #expect(await Self.code { try await storage.grant(user: "alice", project: "nope", role: .reader) } == .notFound)

            let schema = Schema(collections: [CollectionSchema(name: "notes", fields: [FieldSchema(name: "title", type: .string)])])
            try await storage.setSchema(project: "field", schema: schema)
            #expect(try await storage.schema(project: "field") == schema)
            #expect(await Self.code { try await storage.setSchema(project: "nope", schema: schema) } == .notFound)
        }
    }
}
