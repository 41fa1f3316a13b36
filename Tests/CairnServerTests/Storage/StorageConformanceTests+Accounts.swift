import CairnProtocol
import CairnServer
import Foundation
import ServiceLifecycle
import Testing

/// Accounts, tokens, projects, members, schemas, clients and the lifecycle, run against every backend.
@Suite("Storage conformance: accounts, projects and lifecycle")
struct StorageAccountConformanceTests {
    typealias F = StorageFixtures

    func code(_ body: () async throws -> Void) async -> ErrorCode? { await F.errorCode(body) }

    @Test("users: created once, found by name, password hash replaced", arguments: StorageBackend.all)
    func users(backend: StorageBackend) async throws {
        try await backend.withStorage { storage in
            try await storage.createUser(name: "alice", passwordHash: "h1")
            #expect(await code { try await storage.createUser(name: "alice", passwordHash: "h2") } == .alreadyExists)
            try await storage.setPasswordHash(user: "alice", passwordHash: "h3")
            #expect(try await storage.user(named: "alice") == StoredUser(name: "alice", passwordHash: "h3"))
            #expect(try await storage.user(named: "bob") == nil)
            #expect(await code { try await storage.setPasswordHash(user: "bob", passwordHash: "h") } == .notFound)
        }
    }

    @Test("tokens: stored by hash, a refresh token consumed once, families revoked together", arguments: StorageBackend.all)
    func tokens(backend: StorageBackend) async throws {
        try await backend.withStorage { storage in
            try await storage.createUser(name: "alice", passwordHash: "h")
            let access = StoredToken(hash: "a1", kind: .access, user: "alice", family: "f1", expiresAt: F.epoch)
            let refresh = StoredToken(hash: "r1", kind: .refresh, user: "alice", family: "f1", expiresAt: F.epoch)
            let otherFamily = StoredToken(hash: "a2", kind: .access, user: "alice", family: "f2", expiresAt: F.epoch)
            for token in [access, refresh, otherFamily] { try await storage.insertToken(token) }
            #expect(try await storage.token(hash: "a1") == access)
            #expect(try await storage.token(hash: "nope") == nil)
            #expect(try await storage.consumeRefreshToken(hash: "r1"))
            #expect(try await !storage.consumeRefreshToken(hash: "r1"))
            #expect(try await !storage.consumeRefreshToken(hash: "a1"))
            #expect(try await storage.token(hash: "r1")?.used == true)
            try await storage.revokeTokenFamily("f1")
            #expect(try await storage.token(hash: "a1")?.revoked == true)
            #expect(try await storage.token(hash: "r1")?.revoked == true)
            #expect(try await storage.token(hash: "a2")?.revoked == false)
        }
    }

    @Test("projects, members and schemas", arguments: StorageBackend.all)
    func projects(backend: StorageBackend) async throws {
        try await backend.withStorage { storage in
            try await storage.createProject(name: "field", now: F.epoch)
            try await storage.createProject(name: "audit", now: F.epoch)
            #expect(await code { try await storage.createProject(name: "field", now: F.epoch) } == .alreadyExists)
            #expect(try await storage.schema(project: "field")?.collections.isEmpty == true)
            #expect(try await storage.schema(project: "nope") == nil)
            try await storage.createUser(name: "alice", passwordHash: "h")
            #expect(await code { try await storage.grant(user: "bob", project: "field", role: .reader) } == .notFound)
            #expect(await code { try await storage.grant(user: "alice", project: "nope", role: .reader) } == .notFound)
            try await storage.grant(user: "alice", project: "field", role: .reader)
            try await storage.grant(user: "alice", project: "field", role: .admin)
            try await storage.grant(user: "alice", project: "audit", role: .writer)
            #expect(try await storage.role(user: "alice", project: "field") == .admin)
            #expect(try await storage.role(user: "alice", project: "other") == nil)
            #expect(try await storage.memberships(user: "alice") == [
                ProjectMembership(name: "audit", role: .writer), ProjectMembership(name: "field", role: .admin),
            ])
            let schema = Schema(version: "v2", collections: [F.notes])
            try await storage.setSchema(project: "field", schema: schema)
            #expect(try await storage.schema(project: "field") == schema)
            #expect(await code { try await storage.setSchema(project: "nope", schema: schema) } == .notFound)
        }
    }

    @Test("clients register with distinct ids; pulls are noted, unknown ids ignored", arguments: StorageBackend.all)
    func clients(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            let first = try await storage.registerClient(project: "field", user: "alice", device: "iPad", app: nil, now: F.epoch)
            let second = try await storage.registerClient(project: "field", user: "alice", device: nil, app: nil, now: F.epoch)
            #expect(!first.isEmpty && first != second)
            try await storage.notePull(clientID: first, project: "field", version: 3, now: F.epoch)
            try await storage.notePull(clientID: "unknown", project: "field", version: 3, now: F.epoch)
        }
    }

    @Test("storage is usable without running; run() returns at graceful shutdown and closes it", arguments: StorageBackend.all)
    func lifecycle(backend: StorageBackend) async throws {
        try await backend.withStorage { storage in
            try await storage.createProject(name: "field", now: F.epoch)
            let group = ServiceGroup(configuration: .init(services: [storage], logger: .init(label: "test")))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                // Still serving while it runs.
                #expect(try await storage.schema(project: "field") != nil)
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            await #expect(throws: (any Error).self) { try await storage.createProject(name: "later", now: F.epoch) }
        }
    }
}
