import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Download groups and phases: automatic downloads by phase, groups of phase 0 only on demand, groups of queries")
struct DownloadGroupTests {
    /// The collections whose first pull completed, in order, until the run ends.
    static func firstPulls(_ client: CairnClient, during run: () async throws -> Void) async throws -> [String] {
        var events = await client.events().makeAsyncIterator()
        try await run()
        var completed: [String] = []
        while let event = await events.next() {
            if case .firstPullCompleted(let name) = event { completed.append(name) }
            if case .completed = event { break }
        }
        return completed
    }

    static func seed(_ fixture: Fixture) async throws {
        let alice = try await fixture.client("alice")
        try alice.create("notes", id: "n", data: ["title": "n"])
        try alice.create("tasks", id: "t", data: ["title": "t"])
        try alice.create("logs", id: "l", data: ["message": "m"])
        try await alice.sync()
    }

    @Test("sync() pulls groups by phase and leaves out a group of phase 0, which pull(group:) still pulls")
    func phaseZeroOnlyOnDemand() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await Self.seed(fixture)
            let bob = try await fixture.client("bob") {
                $0.downloadGroups = [
                    "second": DownloadGroup(members: ["notes"], phase: 2),
                    "first": DownloadGroup(members: ["logs"], phase: 1),
                    "archive": DownloadGroup(members: ["tasks"], phase: 0),
                ]
            }
            #expect(try await Self.firstPulls(bob) { try await bob.sync() } == ["logs", "notes"])
            #expect(try bob.record("tasks", id: "t") == nil)
            #expect(try !bob.isFirstPullComplete("tasks"))
            try await bob.pull()
            #expect(try bob.record("tasks", id: "t") == nil)
            // Named explicitly, a collection is pulled whatever its group's phase.
            #expect(try await Self.firstPulls(bob) { try await bob.pull(group: "archive") } == ["tasks"])
            #expect(try bob.record("tasks", id: "t") != nil)
        }
    }

    @Test("pull(group:) pulls its members in phase order, those without a phase last in the group's order")
    func groupInPhaseOrder() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await Self.seed(fixture)
            let bob = try await fixture.client("bob") {
                $0.downloadGroups = ["all": ["notes", "logs", "tasks"], "late": DownloadGroup(members: ["notes"], phase: 3)]
                $0.downloadPhases = [["tasks"], ["logs"]]
            }
            #expect(try await Self.firstPulls(bob) { try await bob.pull(group: "all") } == ["tasks", "logs", "notes"])
            await #expect(throws: CairnError.self) { try await bob.pull(group: "nope") }
        }
    }

    @Test("groups may contain groups: pull(group:) pulls the nested members; an outer phase of 0 keeps them out of sync(); cycles are refused")
    func nestedGroups() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await Self.seed(fixture)
            let bob = try await fixture.client("bob") {
                $0.downloadGroups = [
                    "reference": ["logs"],
                    "work": DownloadGroup(members: ["reference", "tasks"], phase: 0),
                ]
            }
            #expect(try await Self.firstPulls(bob) { try await bob.sync() } == ["notes"])
            #expect(try await Self.firstPulls(bob) { try await bob.pull(group: "work") } == ["logs", "tasks"])
            #expect(try bob.record("logs", id: "l") != nil && bob.record("tasks", id: "t") != nil)

            let looping = try await fixture.client("alice") {
                $0.downloadGroups = ["a": ["notes", "b"], "b": ["c"], "c": ["a"]]
            }
            let error = await #expect(throws: CairnError.self) { try await looping.pull(group: "a") }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("a → b → c → a") == true, "\(error?.message ?? "")")
            let clash = try await fixture.client("alice") { $0.downloadGroups = ["notes": ["tasks"], "all": ["notes"]] }
            await #expect(throws: CairnError.self) { try await clash.pull(group: "all") }
        }
    }

    @Test("a group naming a download query pulls only that query; of phase 0, sync() leaves the query out but pulls the collection's others")
    func groupOfQueries() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", (0..<20).map { rank in
                SyncOperation(opId: newOpID(), collection: "tasks", id: "t-\(rank)", op: .create, data: ["title": .string("task \(rank)"), "rank": .integer(Int64(rank))])
            })
            let bob = try await fixture.client("bob") {
                $0.downloadGroups = ["low": DownloadGroup(members: ["low-tasks"], phase: 0), "unknown": ["nope"], "mixed": ["notes"]]
            }
            try bob.createDownloadQuery(name: "low-tasks", collection: "tasks", filter: .condition("rank", .lt, 10))
            try bob.createDownloadQuery(name: "high-tasks", collection: "tasks", filter: .condition("rank", .gte, 10))
            let ranks = { try bob.records(Query("tasks").sorted(by: "rank")).compactMap { $0.data["rank"]?.integerValue.map(Int.init) } }

            try await bob.pull(group: "low")
            #expect(try ranks() == Array(0..<10))
            #expect(try bob.downloadQuery(named: "high-tasks")?.firstPullCompleted == false)

            _ = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "tasks", id: "t-low", op: .create, data: ["title": "new", "rank": 3]),
            ])
            try await bob.sync()
            #expect(try ranks() == Array(0..<20), "the other query pulled; the new low task waits for its group")
            try await bob.pull(group: "low")
            #expect(try ranks() == [0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9] + Array(10..<20))

            await #expect(throws: CairnError.self) { try await bob.pull(group: "unknown") }
            // A name that is both a download query and a collection is refused, not guessed.
            try bob.createDownloadQuery(name: "notes", collection: "tasks", filter: .condition("rank", .lt, 1))
            let error = await #expect(throws: CairnError.self) { try await bob.pull(group: "mixed") }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("both") == true)
        }
    }
}
