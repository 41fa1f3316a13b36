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
        guard PostgresCluster.isAvailable(for: "the PostgreSQL tests") else { return }
        let cluster = try PostgresCluster.start()
        defer { cluster.stop() }
        // The pool's timeouts run on a clock that never moves: on a busy machine a connection may take more than their
        // 10 s to come, and these tests check the storage, not how long the machine takes.
        let storage = try await PostgresStorage(url: cluster.url + "?sslmode=disable", timers: ManualClock())
        do {
            try await body(storage)
        } catch {
            await storage.close()
            throw error
        }
        await storage.close()
    }

    static func code(_ body: () async throws -> Void) async -> ErrorCode? { await StorageFixtures.errorCode(body) }

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

extension PostgresStorageTests {
    @Test("clients: registered with new ids; a pull mark only rises, and only for the client's own project")
    func clients() async throws {
        try await Self.withStorage { storage in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let id = try await storage.registerClient(project: "field", user: "alice", device: "iPad", app: nil, now: now)
            #expect(id.hasPrefix("c-"))
            #expect(try await storage.registerClient(project: "field", user: "alice", device: nil, app: nil, now: now) != id)
            try await storage.notePull(clientID: id, project: "field", version: 7, now: now)
            try await storage.notePull(clientID: id, project: "field", version: 3, now: now)
            try await storage.notePull(clientID: id, project: "other", version: 99, now: now)
            let rows = try await storage.client.client.query("SELECT last_pulled_version FROM clients WHERE id = \(id)")
            #expect(try await rows.decode(Int64.self).first(where: { _ in true }) == 7)
        }
    }

    @Test("purge: old tombstones (remembering the highest version per collection), old operations and expired tokens go")
    func purge() async throws {
        try await Self.withStorage { storage in
            let client = storage.client.client
            for (id, version, deleted, changed) in [("a", 1, true, 100.0), ("b", 2, true, 100.0), ("c", 3, false, 100.0), ("d", 4, true, 900.0)] {
                try await client.query(
                    """
                    INSERT INTO records (project, collection, id, version, updated_at, updated_by, changed_at, deleted, data, field_versions)
                    VALUES ('field', 'notes', \(id), \(Int64(version)), '2027-01-01T00:00:00Z', 'alice', \(changed), \(deleted), '{}', '{}')
                    """)
            }
            try await client.query("INSERT INTO operations VALUES ('field', 'op-1', 'f', '{}', 100), ('field', 'op-2', 'f', '{}', 900)")
            try await storage.createUser(name: "alice", passwordHash: "h")
            for (hash, expires) in [("t1", 100.0), ("t2", 900.0)] {
                try await storage.insertToken(StoredToken(
                    hash: hash, kind: .access, user: "alice", family: "f", expiresAt: Date(timeIntervalSince1970: expires)))
            }
            let report = try await storage.purge(
                tombstonesBefore: Date(timeIntervalSince1970: 500), operationsBefore: Date(timeIntervalSince1970: 500),
                now: Date(timeIntervalSince1970: 500))
            #expect(report == PurgeReport(tombstones: 2, operations: 1, tokens: 1))
            let purged = try await client.query("SELECT purged_through FROM collection_state WHERE project = 'field' AND collection = 'notes'")
            #expect(try await purged.decode(Int64.self).first(where: { _ in true }) == 2)
            let left = try await client.query("SELECT id FROM records ORDER BY id")
            var ids: [String] = []
            for try await id in left.decode(String.self) { ids.append(id) }
            #expect(ids == ["c", "d"])
            // Again, nothing is left to purge, and the remembered version does not fall.
            let again = try await storage.purge(
                tombstonesBefore: Date(timeIntervalSince1970: 500), operationsBefore: Date(timeIntervalSince1970: 500),
                now: Date(timeIntervalSince1970: 500))
            #expect(again == PurgeReport(tombstones: 0, operations: 0, tokens: 0))
        }
    }

    @Test("purges and file sweeps run by three instances at once delete each row once and fail none")
    func concurrentPurges() async throws {
        guard PostgresCluster.isAvailable(for: "the PostgreSQL tests") else { return }
        let url = try PostgresCluster.shared().makeDatabase()
        var instances: [PostgresStorage] = []
        for _ in 0..<3 { instances.append(try await PostgresStorage(url: url, timers: ManualClock())) }
        let first = instances[0]
        try await first.createProject(name: "field", now: Date(timeIntervalSince1970: 0))
        let rows = (1...300).map { index in
            RecordRow(id: "r\(index)", version: Int64(index), updatedAt: "2027-01-01T00:00:00Z", updatedBy: "alice", deleted: true,
                      dataText: "{}", fieldVersions: [:])
        }
        try await StorageFixtures.commit(rows, at: Date(timeIntervalSince1970: 100), in: first)
        for index in 0..<40 {
            _ = try await first.insertFile(StoredFile(
                project: "field", id: "00000000-0000-0000-0000-\(String(format: "%012d", index))", name: "f", contentType: "text/plain",
                size: 1, sha256: nil, status: .new, tags: [], isPublic: false, createdAt: Date(timeIntervalSince1970: 0),
                updatedAt: Date(timeIntervalSince1970: 0), createdBy: "alice", attachTo: nil, attachedVersion: nil,
                expiresAt: Date(timeIntervalSince1970: 50)), projectBytesLimit: nil)
        }
        let (purged, swept) = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for storage in instances {
                group.addTask {
                    let report = try await storage.purge(
                        tombstonesBefore: Date(timeIntervalSince1970: 500), operationsBefore: Date(timeIntervalSince1970: 500),
                        now: Date(timeIntervalSince1970: 500))
                    var removed = 0
                    for file in try await storage.expiredFiles(before: Date(timeIntervalSince1970: 500), limit: 100) {
                        if try await storage.removeNewFile(project: file.project, id: file.id) { removed += 1 }
                    }
                    return (report.tombstones, removed)
                }
            }
            return try await group.reduce(into: (0, 0)) { $0.0 += $1.0; $0.1 += $1.1 }
        }
        #expect(purged == 300, "each tombstone deleted once")
        #expect(swept == 40, "each expired file removed once")
        let feed = try await first.feedRange(
            project: "field", collection: StorageFixtures.notes, since: 0, snapshotHigh: nil, limit: 10, filter: nil)
        #expect(feed.rows.isEmpty)
        #expect(feed.purgedThrough == 300)
        for storage in instances { await storage.close() }
    }
}
