import CairnProtocol
import CairnServer
import Foundation
import Testing

/// The storage contract, run against every backend: the transaction primitives and the feed ranges that the
/// sync layer's rules are built on.
@Suite("Storage conformance: transactions and records")
struct StorageConformanceTests {
    typealias F = StorageFixtures

    @Test("a new project's head version is 0; commit keeps it, rollback and a thrown error discard it", arguments: StorageBackend.all)
    func headVersion(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            #expect(try await F.head(storage) == 0)
            try await storage.withProjectWriteTransaction(project: "field") { transaction in
                try await transaction.setHeadVersion(5)
                #expect(try await transaction.headVersion() == 5)
                return .commit(())
            }
            #expect(try await F.head(storage) == 5)
            #expect(try await F.head(storage, project: "other") == 0)
            let answered = try await storage.withProjectWriteTransaction(project: "field") { transaction in
                try await transaction.setHeadVersion(9)
                try await transaction.writeRecord(F.row("r1", 9), collection: "notes", changedAt: F.epoch)
                return .rollback("rolled back")
            }
            #expect(answered == "rolled back")
            struct Failure: Error {}
            await #expect(throws: Failure.self) {
                try await storage.withProjectWriteTransaction(project: "field") { transaction -> TransactionEnd<Void> in
                    try await transaction.setHeadVersion(11)
                    try await transaction.writeRecord(F.row("r2", 11), collection: "notes", changedAt: F.epoch)
                    _ = try await transaction.headVersion()
                    throw Failure()
                }
            }
            #expect(try await F.head(storage) == 5)
            let left = try await storage.withProjectWriteTransaction(project: "field") {
                .commit(try await $0.currentRecords(collection: "notes", ids: ["r1", "r2"]))
            }
            #expect(left.isEmpty)
        }
    }

    @Test("write transactions of a project run one at a time: no two hand out the same version", arguments: StorageBackend.all)
    func writeLockSerialises(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            let writers = 4, rounds = 15
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for round in 0..<rounds {
                            try await storage.withProjectWriteTransaction(project: "field") { transaction in
                                let version = try await transaction.headVersion() + 1
                                await Task.yield()
                                try await transaction.writeRecord(F.row("w\(writer)-\(round)", version), collection: "notes", changedAt: F.epoch)
                                try await transaction.setHeadVersion(version)
                                return .commit(())
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await F.head(storage) == Int64(writers * rounds))
            let range = try await storage.feedRange(
                project: "field", collection: F.notes, since: 0, snapshotHigh: nil, limit: 1000, filter: nil)
            #expect(range.rows.map(\.version) == Array(1...Int64(writers * rounds)))
        }
    }

    @Test("remembered operations are found by their exact bytes, per project, and within their own transaction", arguments: StorageBackend.all)
    func rememberedOperations(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            let composed = RememberedOperation(opId: "caf\u{E9}", fingerprint: "f1", result: #"{"opId":"café","status":"rejected"}"#)
            let plain = RememberedOperation(opId: "op-1", fingerprint: "f2", result: #"{"status":"applied"}"#)
            try await storage.withProjectWriteTransaction(project: "field") { transaction in
                try await transaction.rememberOperation(composed, at: F.epoch)
                try await transaction.rememberOperation(plain, at: F.epoch)
                #expect(try await transaction.rememberedOperations(["op-1"]) == [plain])
                return .commit(())
            }
            let found = try await storage.withProjectWriteTransaction(project: "field") { transaction in
                .commit(try await transaction.rememberedOperations(["cafe\u{301}", "op-1", "missing"]))
            }
            #expect(found == [plain])
            let exact = try await storage.withProjectWriteTransaction(project: "field") {
                .commit(try await $0.rememberedOperations(["caf\u{E9}"]))
            }
            #expect(exact.map { Array($0.opId.utf8) } == [Array("caf\u{E9}".utf8)])
            #expect(exact.first?.result == composed.result)
            let elsewhere = try await storage.withProjectWriteTransaction(project: "other") {
                .commit(try await $0.rememberedOperations(["op-1"]))
            }
            #expect(elsewhere.isEmpty)
        }
    }

    @Test("records are written and read back with their field versions; a write replaces the row; collections are apart", arguments: StorageBackend.all)
    func recordsRoundTrip(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            let first = F.row("n1", 1, #"{"done":false,"title":"é \"q\""}"#, fields: ["done": 1, "title": 1, "x\"y": Int64.max])
            let other = F.row("n1", 2, #"{"message":"elsewhere"}"#, fields: ["message": 2])
            try await F.commit([first], in: storage)
            try await F.commit([other], collection: "logs", in: storage)
            let read = try await storage.withProjectWriteTransaction(project: "field") {
                .commit(try await $0.currentRecords(collection: "notes", ids: ["n1", "missing"]))
            }
            #expect(read == [first])
            let tombstone = F.row("n1", 3, deleted: true, fields: ["done": 3, "title": 3, "x\"y": Int64.max])
            // Read back, a tombstone also tells what it replaced (data rules judge who may know of it).
            var readTombstone = tombstone
            readTombstone.priorDataText = first.dataText
            try await storage.withProjectWriteTransaction(project: "field") { transaction in
                try await transaction.writeRecord(tombstone, collection: "notes", changedAt: F.epoch)
                // A read in the transaction sees its own write.
                #expect(try await transaction.currentRecords(collection: "notes", ids: ["n1"]) == [readTombstone])
                try await transaction.setHeadVersion(3)
                return .commit(())
            }
            let after = try await storage.withProjectWriteTransaction(project: "field") { transaction in
                .commit(try await transaction.currentRecords(collection: "notes", ids: ["n1"])
                    + transaction.currentRecords(collection: "logs", ids: ["n1"]))
            }
            #expect(after == [readTombstone, other])
            let elsewhere = try await storage.withProjectWriteTransaction(project: "other") {
                .commit(try await $0.currentRecords(collection: "notes", ids: ["n1"]))
            }
            #expect(elsewhere.isEmpty)
        }
    }

    @Test("one read gives the head version, the remembered operations and the rows of several collections, after the transaction's own writes", arguments: StorageBackend.all)
    func combinedRead(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            let note = F.row("n1", 1), log = F.row("l1", 2, #"{"message":"m"}"#, fields: ["message": 2])
            try await F.commit([note], in: storage)
            try await F.commit([log], collection: "logs", in: storage)
            let remembered = RememberedOperation(opId: "op-1", fingerprint: "f", result: "{}")
            let snapshot = try await storage.withProjectWriteTransaction(project: "field") { transaction in
                try await transaction.rememberOperation(remembered, at: F.epoch)
                try await transaction.setHeadVersion(7)
                return .commit(try await transaction.read(TransactionReads(
                    opIds: ["op-1", "op-2"], records: ["notes": ["n1", "n2"], "logs": ["l1"], "empty": ["x"]])))
            }
            #expect(snapshot.headVersion == 7)
            #expect(snapshot.operations == [remembered])
            #expect(snapshot.records["notes"] == [note])
            #expect(snapshot.records["logs"] == [log])
            #expect(snapshot.records["empty"] == [])
            let nothing = try await storage.withProjectWriteTransaction(project: "field") { .commit(try await $0.read(TransactionReads())) }
            #expect(nothing == TransactionSnapshot(headVersion: 7, operations: [], records: [:]))
        }
    }

    @Test("the live digest covers live records in id byte order, with the head version", arguments: StorageBackend.all)
    func liveDigest(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            // "B" sorts before "a" by bytes, and "é" after both: a collation by language would order them otherwise.
            try await F.commit([F.row("b", 1), F.row("a", 2), F.row("c", 3, deleted: true), F.row("B", 4), F.row("é", 5)], in: storage)
            let live = try await storage.liveDigest(project: "field", collection: F.notes, filter: nil)
            #expect(live.head == 5)
            #expect(live.digest == CollectionDigest(pairs: [("a", 2), ("b", 1), ("B", 4), ("é", 5)]))
            #expect(live.digest.count == 4)
            var inOrder = CollectionDigest.Builder()
            for (id, version) in [("B", Int64(4)), ("a", 2), ("b", 1), ("é", 5)] { inOrder.add(id: id, version: version) }
            #expect(live.digest == inOrder.digest)
        }
    }
}
