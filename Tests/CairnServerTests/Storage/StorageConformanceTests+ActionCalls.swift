import CairnProtocol
import CairnServer
import Foundation
import Testing

/// Action call outcomes, run against every backend: stored by project and key, the first of two kept.
@Suite("Storage conformance: action calls")
struct StorageActionCallConformanceTests {
    typealias F = StorageFixtures

    static func call(_ key: String, project: String = "field", status: Int = 200, answer: String = #"{"ok":true}"#) -> StoredActionCall {
        StoredActionCall(project: project, idempotencyKey: key, action: "closeJob", caller: "alice", status: status, answer: answer, completedAt: F.epoch)
    }

    @Test("an outcome is read back by project and key; recording a key again keeps and returns the first", arguments: StorageBackend.all)
    func actionCalls(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            let before = try await storage.actionCall(project: "field", idempotencyKey: "k-1")
            #expect(before == nil)
            let recorded = try await storage.recordActionCall(Self.call("k-1"))
            #expect(recorded == Self.call("k-1"))
            let read = try await storage.actionCall(project: "field", idempotencyKey: "k-1")
            #expect(read == Self.call("k-1"))
            // The same key in another project is another call.
            let elsewhere = try await storage.actionCall(project: "other", idempotencyKey: "k-1")
            #expect(elsewhere == nil)
            let again = try await storage.recordActionCall(Self.call("k-1", status: 409, answer: #"{"code":"action_failed"}"#))
            #expect(again == Self.call("k-1"))
            let other = try await storage.recordActionCall(Self.call("k-1", project: "other", status: 500))
            #expect(other == Self.call("k-1", project: "other", status: 500))
        }
    }

    @Test("the purge forgets answers as old as remembered operations, and counts them with them", arguments: StorageBackend.all)
    func purge(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            _ = try await storage.recordActionCall(Self.call("old"))
            var fresh = Self.call("fresh")
            fresh.completedAt = F.epoch + 7200
            _ = try await storage.recordActionCall(fresh)
            let report = try await storage.purge(tombstonesBefore: F.epoch, operationsBefore: F.epoch + 3600, now: F.epoch + 7200)
            #expect(report.operations == 1)
            #expect(try await storage.actionCall(project: "field", idempotencyKey: "old") == nil)
            #expect(try await storage.actionCall(project: "field", idempotencyKey: "fresh") == fresh)
        }
    }
}
