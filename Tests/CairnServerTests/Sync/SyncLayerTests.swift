import CairnProtocol
import CairnTesting
import Foundation
import Testing

@testable import CairnServer

/// The sync layer's rules over every storage backend: batches (versions, replays, atomic rollback) and versions
/// handed out outside a batch.
@Suite("Sync layer over every backend", .timeLimit(.minutes(20)))
struct SyncLayerTests {
    static let schema = Schema(collections: [StorageFixtures.notes])
    static let now = StorageFixtures.epoch

    func create(_ id: String, _ title: String, opId: String) -> SyncOperation {
        SyncOperation(opId: opId, collection: "notes", id: id, op: .create, data: ["title": .string(title)])
    }

    @Test("batches number versions, replay remembered opIds, and roll atomic batches back whole", arguments: StorageBackend.all)
    func batches(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            let service = BatchService(storage: storage)
            func apply(_ operations: [SyncOperation], atomic: Bool = false) async throws -> BatchOutcome {
                try await service.apply(BatchRequest(atomic: atomic, operations: operations), project: "field", schema: Self.schema,
                                        user: "alice", now: Self.now)
            }
            let first = try await apply([create("a", "one", opId: "o1"), create("b", "two", opId: "o2")])
            #expect(first.results.map { $0.record?.version } == [1, 2])
            #expect(first.changedCollections == ["notes": 2])
            let replay = try await apply([create("a", "one", opId: "o1")])
            #expect(replay.resultTexts == [first.resultTexts[0]])
            #expect(replay.changedCollections.isEmpty)
            let aborted = try await apply([create("c", "three", opId: "o3"), create("a", "dup", opId: "o4")], atomic: true)
            #expect(aborted.results.map { $0.error?.code } == [.batchAborted, nil])
            #expect(aborted.results[1].status == .conflict)
            // Nothing of the rolled-back batch stays: no version, no remembered opId.
            #expect(try await StorageFixtures.head(storage) == 2)
            let again = try await apply([create("c", "three", opId: "o3")])
            #expect(again.results.first?.record?.version == 3)
        }
    }

    @Test("a version handed out outside a batch: fields set on a live record, numbered with the batches", arguments: StorageBackend.all)
    func setFieldsOutsideBatch(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            _ = try await BatchService(storage: storage).apply(
                BatchRequest(operations: [create("a", "one", opId: "o1")]), project: "field", schema: Self.schema, user: "alice", now: Self.now)
            // The commit itself tells the listeners: one notice, sent before setFields returns.
            let notifier = ChangeNotifier()
            var notices = await notifier.subscribe(project: "field").makeAsyncIterator()
            let commits = RecordCommits(storage: storage, notifier: notifier)
            let record = try await RecordWriter.setFields(
                ["done": true], collection: StorageFixtures.notes, id: "a", project: "field", user: "files", now: Self.now, commits: commits)
            #expect(record.version == 2)
            #expect(record.data == ["title": "one", "done": true])
            #expect(await notices.next() == ChangeNotice(collection: "notes", version: 2))
            let rows = try await storage.feedRange(
                project: "field", collection: StorageFixtures.notes, since: 1, snapshotHigh: nil, limit: 10, filter: nil)
            #expect(rows.rows.map(\.updatedBy) == ["files"])
            #expect(rows.head == 2)
            let next = try await BatchService(storage: storage).apply(
                BatchRequest(operations: [SyncOperation(opId: "o2", collection: "notes", id: "a", op: .patch, baseVersion: 1, data: ["title": "x"])]),
                project: "field", schema: Self.schema, user: "alice", now: Self.now)
            // merge-fields is not this collection's policy: a stale base version is a conflict with the new state.
            #expect(next.results.first?.status == .conflict)
            #expect(next.results.first?.current?.version == 2)
            func code(_ fields: [String: JSONValue], id: String) async -> ErrorCode? {
                do {
                    _ = try await RecordWriter.setFields(
                        fields, collection: StorageFixtures.notes, id: id, project: "field", user: "files", now: Self.now, commits: commits)
                    return nil
                } catch {
                    return (error as? ErrorBody)?.code
                }
            }
            #expect(await code(["done": "no"], id: "a") == .validationFailed)
            #expect(await code(["done": true], id: "missing") == .notFound)
            _ = try await BatchService(storage: storage).apply(
                BatchRequest(operations: [SyncOperation(opId: "o3", collection: "notes", id: "a", op: .delete)]),
                project: "field", schema: Self.schema, user: "alice", now: Self.now)
            #expect(await code(["done": true], id: "a") == .notFound)
            #expect(try await StorageFixtures.head(storage) == 3)
        }
    }

    @Test("the server's setFields is an ordinary change: pulled at its new version, with a live notice")
    func serverSetFields() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .create, data: ["title": "a"])])
            let cursor = try await fixture.pullAll("rita", "notes").cursor
            let url = fixture.server.baseURL.appendingPathComponent("v1/projects/field/events")
            let lines = try await EventStreamReader.open(url: url, token: fixture.tokens["rita"]!)
            let record = try await fixture.server.server.setFields(["photo": "f-1"], project: "field", collection: "notes", id: "n1", user: "alice")
            #expect(record.version == 2)
            let notice = try CairnJSON.decode(ChangeNotice.self, from: Array(try await lines.nextData().utf8))
            #expect(notice == ChangeNotice(collection: "notes", version: 2))
            await lines.close()
            let delta = try await fixture.pullAll("rita", "notes", since: cursor).changes
            #expect(delta.map(\.version) == [2])
            #expect(delta.first?.data == ["title": "a", "photo": "f-1"])
        }
    }
}
