import CairnProtocol
import CairnServer
import Foundation
import Testing

/// Operators, the administration lists, removing members and revoking sign-ins, run against every backend.
@Suite("Storage conformance: administration")
struct StorageAdministrationConformanceTests {
    typealias F = StorageFixtures

    func code(_ body: () async throws -> Void) async -> ErrorCode? { await F.errorCode(body) }

    @Test("operators: set and taken away by user; an unknown user is not_found and no operator", arguments: StorageBackend.all)
    func operators(backend: StorageBackend) async throws {
        try await backend.withStorage { storage in
            try await storage.createUser(name: "alice", passwordHash: "h")
            #expect(try await !storage.isOperator(user: "alice"))
            try await storage.setOperator(user: "alice", true)
            #expect(try await storage.isOperator(user: "alice"))
            try await storage.setOperator(user: "alice", false)
            #expect(try await !storage.isOperator(user: "alice"))
            #expect(try await !storage.isOperator(user: "bob"))
            #expect(await code { try await storage.setOperator(user: "bob", true) } == .notFound)
        }
    }

    @Test("users and projects are listed by name in pages, with memberships, member counts and head versions", arguments: StorageBackend.all)
    func usersAndProjects(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            for name in ["carol", "alice", "bob"] { try await storage.createUser(name: name, passwordHash: "h") }
            try await storage.setOperator(user: "carol", true)
            try await storage.grant(user: "alice", project: "other", role: .reader)
            try await storage.grant(user: "alice", project: "field", role: .writer)
            try await storage.grant(user: "bob", project: "field", role: .admin)
            try await F.commit([F.row("n1", 1), F.row("n2", 2)], in: storage)

            let all = try await storage.users(after: nil, limit: 10)
            #expect(all == [
                UserSummary(name: "alice", isOperator: false, projects: [
                    ProjectMembership(name: "field", role: .writer), ProjectMembership(name: "other", role: .reader),
                ]),
                UserSummary(name: "bob", isOperator: false, projects: [ProjectMembership(name: "field", role: .admin)]),
                UserSummary(name: "carol", isOperator: true, projects: []),
            ])
            // A page holds whole users, however many projects each has.
            #expect(try await storage.users(after: nil, limit: 1).map(\.name) == ["alice"])
            #expect(try await storage.users(after: "alice", limit: 1).map(\.name) == ["bob"])
            #expect(try await storage.users(after: "carol", limit: 5).isEmpty)

            let projects = try await storage.projects(after: nil, limit: 10)
            #expect(projects == [
                ProjectSummary(name: "field", createdAt: F.epoch, members: 2, headVersion: 2),
                ProjectSummary(name: "other", createdAt: F.epoch, members: 1, headVersion: 0),
            ])
            #expect(try await storage.projects(after: "field", limit: 10).map(\.name) == ["other"])
            #expect(try await storage.projects(after: nil, limit: 1).map(\.name) == ["field"])
        }
    }

    @Test("members are listed by user in pages and removed one by one", arguments: StorageBackend.all)
    func members(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            for name in ["alice", "bob", "carol"] { try await storage.createUser(name: name, passwordHash: "h") }
            try await storage.grant(user: "carol", project: "field", role: .reader)
            try await storage.grant(user: "alice", project: "field", role: .admin)
            try await storage.grant(user: "bob", project: "other", role: .writer)
            #expect(try await storage.members(project: "field", after: nil, limit: 10) == [
                ProjectMember(user: "alice", role: .admin), ProjectMember(user: "carol", role: .reader),
            ])
            #expect(try await storage.members(project: "field", after: "alice", limit: 10) == [ProjectMember(user: "carol", role: .reader)])
            #expect(try await storage.members(project: "field", after: nil, limit: 1).count == 1)
            #expect(try await storage.members(project: "nope", after: nil, limit: 10).isEmpty)

            #expect(try await storage.revoke(user: "alice", project: "field"))
            #expect(try await !storage.revoke(user: "alice", project: "field"))
            #expect(try await !storage.revoke(user: "bob", project: "field"))
            #expect(try await storage.role(user: "alice", project: "field") == nil)
            #expect(try await storage.role(user: "bob", project: "other") == .writer)
            #expect(try await storage.members(project: "field", after: nil, limit: 10).map(\.user) == ["carol"])
        }
    }

    @Test("clients are listed by id with how far behind the head version each is, and filtered by it", arguments: StorageBackend.all)
    func clients(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            let ipad = try await storage.registerClient(project: "field", user: "alice", device: "iPad", app: "Field 2", now: F.epoch)
            let phone = try await storage.registerClient(project: "field", user: "bob", device: nil, app: nil, now: F.epoch + 1)
            _ = try await storage.registerClient(project: "other", user: "bob", device: nil, app: nil, now: F.epoch)
            try await F.commit((1...10).map { F.row("n\($0)", Int64($0)) }, in: storage)
            try await storage.notePull(clientID: ipad, project: "field", version: 8, now: F.epoch + 60)

            let listed = try await storage.clients(project: "field", behind: 0, after: nil, limit: 10)
            #expect(listed.map(\.clientId) == [ipad, phone].sorted())
            let first = try #require(listed.first { $0.clientId == ipad })
            #expect(first == ClientSummary(
                clientId: ipad, user: "alice", device: "iPad", app: "Field 2", registeredAt: F.epoch, lastSeenAt: F.epoch + 60,
                lastPulledVersion: 8, behind: 2))
            let second = try #require(listed.first { $0.clientId == phone })
            #expect(second.device == nil && second.app == nil && second.behind == 10 && second.lastSeenAt == F.epoch + 1)

            #expect(try await storage.clients(project: "field", behind: 3, after: nil, limit: 10).map(\.clientId) == [phone])
            #expect(try await storage.clients(project: "field", behind: 2, after: nil, limit: 10).count == 2)
            #expect(try await storage.clients(project: "field", behind: 11, after: nil, limit: 10).isEmpty)
            let sorted = [ipad, phone].sorted()
            #expect(try await storage.clients(project: "field", behind: 0, after: sorted[0], limit: 10).map(\.clientId) == [sorted[1]])
            #expect(try await storage.clients(project: "field", behind: 0, after: nil, limit: 1).map(\.clientId) == [sorted[0]])
            #expect(try await storage.clients(project: "nope", behind: 0, after: nil, limit: 10).isEmpty)
        }
    }

    @Test("revoking sign-ins revokes every token family of the user and records when, for users without an account too",
          arguments: StorageBackend.all)
    func signIns(backend: StorageBackend) async throws {
        try await backend.withStorage { storage in
            try await storage.createUser(name: "alice", passwordHash: "h")
            try await storage.createUser(name: "bob", passwordHash: "h")
            for (hash, user, family) in [("a1", "alice", "f1"), ("a2", "alice", "f2"), ("b1", "bob", "f3")] {
                try await storage.insertToken(StoredToken(hash: hash, kind: .access, user: user, family: family, expiresAt: F.epoch))
            }
            #expect(try await storage.signInsRevokedAt(user: "alice") == nil)
            try await storage.revokeSignIns(user: "alice", now: F.epoch)
            #expect(try await storage.token(hash: "a1")?.revoked == true)
            #expect(try await storage.token(hash: "a2")?.revoked == true)
            #expect(try await storage.token(hash: "b1")?.revoked == false)
            #expect(try await storage.signInsRevokedAt(user: "alice") == F.epoch)
            try await storage.revokeSignIns(user: "alice", now: F.epoch + 30)
            #expect(try await storage.signInsRevokedAt(user: "alice") == F.epoch + 30)
            #expect(try await storage.signInsRevokedAt(user: "bob") == nil)
            // An identity provider's user has no account here.
            try await storage.revokeSignIns(user: "auth0|5f7c", now: F.epoch + 5)
            #expect(try await storage.signInsRevokedAt(user: "auth0|5f7c") == F.epoch + 5)
        }
    }

    @Test("a client is read by id, removed with its diagnostics report; a report replaces the one before", arguments: StorageBackend.all)
    func clientSupport(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            let kept = try await storage.registerClient(project: "field", user: "alice", device: "iPad", app: "Field", now: F.epoch)
            let removed = try await storage.registerClient(project: "field", user: "bob", device: nil, app: nil, now: F.epoch)
            try await F.commit([F.row("n1", 1)], in: storage)
            let client = try #require(try await storage.client(id: kept, project: "field"))
            #expect(client == ClientSummary(
                clientId: kept, user: "alice", device: "iPad", app: "Field", registeredAt: F.epoch, lastSeenAt: F.epoch, lastPulledVersion: 0, behind: 1))
            #expect(try await storage.client(id: kept, project: "other") == nil)
            #expect(try await storage.client(id: "c-nope", project: "field") == nil)

            #expect(try await storage.diagnostics(clientID: kept, project: "field") == nil)
            #expect(try await storage.storeDiagnostics(clientID: kept, project: "field", report: #"{"a":1}"#, now: F.epoch + 1))
            #expect(try await storage.storeDiagnostics(clientID: kept, project: "field", report: #"{"a":2}"#, now: F.epoch + 2))
            #expect(try await storage.diagnostics(clientID: kept, project: "field") == StoredDiagnostics(report: #"{"a":2}"#, uploadedAt: F.epoch + 2))
            #expect(try await storage.diagnostics(clientID: kept, project: "other") == nil)
            #expect(try await !storage.storeDiagnostics(clientID: "c-nope", project: "field", report: "{}", now: F.epoch))
            #expect(try await !storage.storeDiagnostics(clientID: kept, project: "other", report: "{}", now: F.epoch))
            #expect(try await storage.storeDiagnostics(clientID: removed, project: "field", report: "{}", now: F.epoch))

            #expect(try await !storage.removeClient(id: removed, project: "other"))
            #expect(try await storage.removeClient(id: removed, project: "field"))
            #expect(try await !storage.removeClient(id: removed, project: "field"))
            #expect(try await storage.client(id: removed, project: "field") == nil)
            #expect(try await storage.diagnostics(clientID: removed, project: "field") == nil)
            #expect(try await storage.clients(project: "field", behind: 0, after: nil, limit: 10).map(\.clientId) == [kept])
            #expect(try await storage.diagnostics(clientID: kept, project: "field") != nil)
        }
    }

    @Test("backups are recorded once each and listed newest first, at most the limit", arguments: StorageBackend.all)
    func backups(backend: StorageBackend) async throws {
        try await backend.withStorage { storage in
            #expect(try await storage.backups(limit: 10).isEmpty)
            let monday = BackupSummary(createdAt: F.epoch, path: "/backups/monday", databaseBytes: 4096, fileCount: 2)
            let tuesday = BackupSummary(createdAt: F.epoch + 86_400.5, path: "/backups/tuesday", databaseBytes: 8192, fileCount: 0)
            try await storage.recordBackup(monday)
            try await storage.recordBackup(tuesday)
            try await storage.recordBackup(monday)
            #expect(try await storage.backups(limit: 10) == [tuesday, monday])
            #expect(try await storage.backups(limit: 1) == [tuesday])
        }
    }
}
