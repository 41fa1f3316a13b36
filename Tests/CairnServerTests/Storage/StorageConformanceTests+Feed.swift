import CairnProtocol
import CairnServer
import Foundation
import Testing

/// Feed ranges and the purge, run against every backend.
@Suite("Storage conformance: feed ranges and purge")
struct StorageFeedConformanceTests {
    typealias F = StorageFixtures

    /// n1..n4 at versions 1-4 (n3 a tombstone, n2 done), t1 in tasks at 5.
    static func seed(_ storage: any ServerStorage) async throws {
        try await F.commit([
            F.row("n1", 1, #"{"done":false,"title":"a"}"#), F.row("n2", 2, #"{"done":true,"title":"b"}"#),
            F.row("n3", 3, deleted: true), F.row("n4", 4, #"{"title":"d"}"#),
        ], in: storage)
        try await F.commit([F.row("t1", 5, #"{"title":"t"}"#)], collection: "tasks", in: storage)
    }

    func range(_ storage: any ServerStorage, since: Int64 = 0, high: Int64? = nil, limit: Int = 100, filter: Filter? = nil) async throws -> FeedRows {
        try await storage.feedRange(project: "field", collection: F.notes, since: since, snapshotHigh: high, limit: limit, filter: filter)
    }

    @Test("a range lists a collection's rows after since in version order, tombstones included, with more and head", arguments: StorageBackend.all)
    func ranges(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            try await Self.seed(storage)
            let first = try await range(storage, limit: 2)
            #expect(first.rows.map(\.id) == ["n1", "n2"])
            #expect(first.hasMore)
            #expect(first.head == 5)
            #expect(first.purgedThrough == 0)
            #expect(first.rows[0] == FeedRow(
                id: "n1", version: 1, updatedAt: "2027-01-15T08:00:00Z", updatedBy: "alice", deleted: false,
                dataText: #"{"done":false,"title":"a"}"#, matchesFilter: true))
            let rest = try await range(storage, since: 2, limit: 2)
            #expect(rest.rows.map(\.id) == ["n3", "n4"])
            #expect(rest.rows.map(\.deleted) == [true, false])
            #expect(!rest.hasMore)
            #expect(try await range(storage, since: 4).rows.isEmpty)
        }
    }

    @Test("below a snapshot's high mark only live matching rows; above it every change", arguments: StorageBackend.all)
    func snapshotHigh(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            try await Self.seed(storage)
            try await F.commit([F.row("n1", 6, deleted: true), F.row("n5", 7, #"{"done":true}"#)], in: storage)
            let snapshot = try await range(storage, high: 4)
            #expect(snapshot.rows.map(\.id) == ["n2", "n4", "n1", "n5"])
            #expect(snapshot.rows.map(\.deleted) == [false, false, true, false])
            let open: Filter = .condition("done", .ne, true)
            let filtered = try await range(storage, high: 4, filter: open)
            // Up to the mark: only n4 (live, matching); after it, n1's tombstone and n5, which does not match.
            #expect(filtered.rows.map(\.id) == ["n4", "n1", "n5"])
            #expect(filtered.rows.map(\.matchesFilter) == [true, true, false])
        }
    }

    @Test("filters are compiled for the engine: each row says whether it matches; a bad filter is validation_failed", arguments: StorageBackend.all)
    func filters(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            try await Self.seed(storage)
            let cases: [(Filter, [String])] = [
                (.condition("done", .eq, false), ["n1"]), (.condition("done", .ne, true), ["n1", "n4"]),
                (.condition("title", .like, "B%"), ["n2"]), (.condition("id", .in, ["n4", "x"]), ["n4"]),
                (.and([]), ["n1", "n2", "n4"]), (.or([]), []),
            ]
            for (filter, matching) in cases {
                let rows = try await range(storage, filter: filter).rows
                #expect(rows.filter { !$0.deleted && $0.matchesFilter }.map(\.id) == matching, "\(filter)")
                #expect(rows.count == 4)
            }
            for bad: Filter in [.condition("nope", .eq, 1), .condition("done", .lt, true), .condition("title", .eq, 5)] {
                await #expect(throws: ErrorBody.self) { try await range(storage, filter: bad) }
                do {
                    _ = try await range(storage, filter: bad)
                } catch let error as ErrorBody {
                    #expect(error.code == .validationFailed)
                }
            }
        }
    }

    @Test("the purge deletes old tombstones (remembering the highest per collection), old operations and expired tokens", arguments: StorageBackend.all)
    func purge(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            try await Self.seed(storage)
            let later = F.epoch + 7200
            try await F.commit([F.row("n2", 6, deleted: true)], at: later, in: storage)
            try await storage.withProjectWriteTransaction(project: "field") { transaction in
                try await transaction.rememberOperation(RememberedOperation(opId: "old", fingerprint: "f", result: "{}"), at: F.epoch)
                try await transaction.rememberOperation(RememberedOperation(opId: "new", fingerprint: "f", result: "{}"), at: later)
                return .commit(())
            }
            try await storage.createUser(name: "alice", passwordHash: "h")
            try await storage.insertToken(StoredToken(hash: "expired", kind: .access, user: "alice", family: "f", expiresAt: F.epoch))
            try await storage.insertToken(StoredToken(hash: "valid", kind: .access, user: "alice", family: "f", expiresAt: later + 60))

            let report = try await storage.purge(tombstonesBefore: F.epoch + 3600, operationsBefore: F.epoch + 3600, now: later)
            #expect(report == PurgeReport(tombstones: 1, operations: 1, tokens: 1))
            let rows = try await range(storage)
            #expect(rows.rows.map(\.id) == ["n1", "n4", "n2"])
            #expect(rows.purgedThrough == 3)
            let remembered = try await storage.withProjectWriteTransaction(project: "field") {
                .commit(try await $0.rememberedOperations(["old", "new"]).map(\.opId))
            }
            #expect(remembered == ["new"])
            #expect(try await storage.token(hash: "expired") == nil)
            #expect(try await storage.token(hash: "valid") != nil)
            // Another collection's horizon is its own.
            let tasks = try await storage.feedRange(
                project: "field", collection: CollectionSchema(name: "tasks", fields: []), since: 0, snapshotHigh: nil, limit: 10, filter: nil)
            #expect(tasks.purgedThrough == 0)
        }
    }

    @Test("the purge keeps a tombstone that a client seen within twice the retention has not pulled yet, and no longer once it has", arguments: StorageBackend.all)
    func purgeKeepsWhatClientsNeed(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            try await Self.seed(storage)
            // A retention of an hour: the purge runs at epoch + 2 h, so tombstones before epoch + 1 h go, and clients
            // seen since the epoch (twice the retention) hold what they have not pulled.
            let (horizon, now) = (F.epoch + 3600, F.epoch + 7200)
            // Pulled to version 2, then away for longer than the retention: n3's tombstone (version 3) is not on it yet.
            let behind = try await storage.registerClient(project: "field", user: "alice", device: nil, app: nil, now: F.epoch)
            try await storage.notePull(clientID: behind, project: "field", version: 2, now: F.epoch + 10)
            // Held by nobody: a client last seen more than twice the retention ago, one that never pulled to the end,
            // one of another project.
            let gone = try await storage.registerClient(project: "field", user: "bob", device: nil, app: nil, now: F.epoch - 60)
            try await storage.notePull(clientID: gone, project: "field", version: 1, now: F.epoch - 60)
            _ = try await storage.registerClient(project: "field", user: "carol", device: nil, app: nil, now: horizon + 60)
            let other = try await storage.registerClient(project: "other", user: "dave", device: nil, app: nil, now: F.epoch)
            try await storage.notePull(clientID: other, project: "other", version: 1, now: horizon + 60)

            var report = try await storage.purge(tombstonesBefore: horizon, operationsBefore: F.epoch, now: now)
            #expect(report.tombstones == 0)
            #expect(try await range(storage).rows.map(\.id) == ["n1", "n2", "n3", "n4"])
            #expect(try await range(storage).purgedThrough == 0)

            try await storage.notePull(clientID: behind, project: "field", version: 5, now: horizon + 120)
            report = try await storage.purge(tombstonesBefore: horizon, operationsBefore: F.epoch, now: now)
            #expect(report.tombstones == 1)
            #expect(try await range(storage).rows.map(\.id) == ["n1", "n2", "n4"])
            #expect(try await range(storage).purgedThrough == 3)
        }
    }
}
