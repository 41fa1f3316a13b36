import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

/// Another API, inside the test: it keeps records with versions, refuses titles it does not like, and reports a
/// conflict when an update was made on an old version.
actor FakeAPI {
    var records: [String: Record] = [:]
    var version: Int64 = 0
    var calls = 0
    var offline = false

    func seed(_ id: String, _ data: [String: JSONValue]) {
        version += 1
        records[id] = Record(id: id, version: version, data: data)
    }

    func apply(_ operations: [PendingOperation]) throws -> [SyncTaskResult] {
        calls += 1
        if offline { throw CairnError(.networkUnavailable, "the other API is down", isRetryable: true) }
        return operations.map { operation in
            let current = records[operation.recordID]
            if let base = operation.baseVersion, let current, current.version != base { return .conflict(current: current) }
            if operation.data?["title"] == "forbidden" {
                return .rejected(ErrorBody(code: .validationFailed, message: "the other API refuses this title", details: ["field": "title"]))
            }
            version += 1
            var data = current?.data ?? [:]
            switch operation.kind {
            case .create, .update: data = operation.data ?? [:]
            case .patch: for (key, value) in operation.data ?? [:] { data[key] = value.isNull ? nil : value }
            case .delete: data = [:]
            }
            let record = Record(id: operation.recordID, version: version, updatedBy: "fake", deleted: operation.kind == .delete, data: data)
            records[operation.recordID] = record
            return .applied(record)
        }
    }
}

struct FakeTask: CollectionSyncTask {
    let api: FakeAPI
    func upload(_ operations: [PendingOperation]) async throws -> [SyncTaskResult] { try await api.apply(operations) }
}

struct CountingTask: AutomaticSyncTask {
    let api: FakeAPI
    func run(_ client: CairnClient) async throws {
        let cache = try client.jsonCache(name: "fake-records", fields: [.string("title")])
        let records = await api.records.values.map { record -> JSONValue in
            var object = record.data
            object["id"] = .string(record.id)
            return .object(object)
        }
        try cache.cache(records)
    }
}

@Suite("Custom sync tasks")
struct SyncTaskTests {
    @Test("a collection's uploads go to the app's task, with applied, conflicting and rejected answers handled as the server's")
    func collectionTask() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let fake = FakeAPI()
            let alice = try await fixture.client("alice") {
                $0.syncTasks = ["tasks": FakeTask(api: fake)]
                $0.automaticTasks = [CountingTask(api: fake)]
                $0.conflictResolver = .clientWins
            }
            try alice.create("tasks", id: "t-1", data: ["title": "to the other API"])
            try alice.create("tasks", id: "t-2", data: ["title": "forbidden"])
            try alice.create("notes", id: "n-1", data: ["title": "to the Cairn server"])
            let summary = try await alice.sync()
            #expect(summary.pushed == 2)
            #expect(summary.failed == 1)
            #expect(await fake.records["t-1"]?.data["title"] == "to the other API")
            #expect(await fake.records["t-2"] == nil)
            #expect(try alice.failedOperations().map { $0.recordID } == ["t-2"])
            #expect(try alice.failedOperations().first?.error.details?["field"] == "title")
            let onServer = try await fixture.pullAll("rita", "notes").changes.map { $0.id }
            #expect(onServer == ["n-1"])
            #expect(try await fixture.pullAll("rita", "tasks").changes.isEmpty, "the server never saw the task collection's changes")
            // The automatic task ran after the pull, into a cache.
            #expect(try alice.jsonCache(name: "fake-records", fields: [.string("title")]).count() == 1)

            // A change made on a stale version conflicts; the resolver settles it and the resolution goes to the task.
            let base = try #require(await fake.records["t-1"]?.version)
            #expect(try alice.record("tasks", id: "t-1")?.version == base)
            await fake.seed("t-1", ["title": "changed in the other API"])
            try alice.patch("tasks", id: "t-1", ["rank": 5])
            let second = try await alice.sync()
            #expect(second.conflicts == 1)
            #expect(await fake.records["t-1"]?.data["rank"] == 5)
            #expect(try alice.conflicts().first?.conflict.id == "t-1")

            // The other API down: the change stays queued, the sync fails, the history says why; then it goes through.
            await fake.setOffline(true)
            try alice.patch("tasks", id: "t-1", ["rank": 6])
            await #expect(throws: CairnError.self) { try await alice.sync() }
            #expect(alice.hasPendingUpload)
            #expect(try alice.history(limit: 1).first?.error?.contains("other API is down") == true)
            await fake.setOffline(false)
            try await alice.sync()
            #expect(!alice.hasPendingUpload)
            #expect(await fake.records["t-1"]?.data["rank"] == 6)
        }
    }
}

extension FakeAPI {
    func setOffline(_ value: Bool) { offline = value }
}
