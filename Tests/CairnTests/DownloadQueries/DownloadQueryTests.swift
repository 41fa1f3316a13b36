import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Synchronization
import Testing

@Suite("Download queries: partial sync through persistent, overlapping queries")
struct DownloadQueryTests {
    /// A server holding tasks t-0 ... t-19 with rank 0 ... 19, and a store file for bob that survives restarts.
    struct Setup {
        let fixture: Fixture
        let path = Fixture.temporaryStorePath()
        let network = SwitchableTransport()

        static func start() async throws -> Setup {
            let fixture = try await Fixture.start()
            _ = try await fixture.push("alice", (0..<20).map { rank in
                SyncOperation(opId: newOpID(), collection: "tasks", id: "t-\(rank)", op: .create, data: ["title": .string("task \(rank)"), "rank": .integer(Int64(rank))])
            })
            return Setup(fixture: fixture)
        }

        /// Opens bob's client on the same store file: every call is a restart.
        /// Bob's client; `streams: false` pulls page by page, for a test that breaks a pull at its second request.
        func bob(pageSize: Int = 1000, streams: Bool = true) async throws -> CairnClient {
            try await fixture.client("bob", store: .file(path), network: network) {
                $0.pageSize = pageSize
                $0.streamsPages = streams
            }
        }

        func ranks(_ client: CairnClient) throws -> [Int] {
            try client.records(Query("tasks").sorted(by: "rank")).compactMap { if case .integer(let rank)? = $0.data["rank"] { return Int(rank) } else { return nil } }
        }

        func setRank(_ id: String, _ rank: Int) async throws {
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "tasks", id: id, op: .patch, data: ["rank": .integer(Int64(rank))])])
        }
    }

    static let low: Filter = .condition("rank", .lt, 10)
    static let middle: Filter = .and([.condition("rank", .gte, 5), .condition("rank", .lt, 15)])

    @Test("overlapping queries hold their records together; deleting one keeps what the other holds; gone and deleted records leave; a restart between any two steps changes nothing")
    func overlapAndDelete() async throws {
        let setup = try await Setup.start()
        try await withCleanup({ await setup.fixture.stop() }) {
            var bob = try await setup.bob()
            try bob.createDownloadQuery(name: "low", collection: "tasks", filter: Self.low)
            try bob.createDownloadQuery(name: "middle", collection: "tasks", filter: Self.middle)
            expectError(.alreadyExists) { try bob.createDownloadQuery(name: "low", collection: "tasks", filter: Self.low) }
            expectError(.validationFailed) { try bob.createDownloadQuery(name: "bad", collection: "tasks", filter: .condition("nope", .eq, 1)) }
            bob = try await setup.bob()
            #expect(try bob.downloadQueries().map(\.name) == ["low", "middle"])
            try await bob.pull()
            #expect(try setup.ranks(bob) == Array(0..<15))
            #expect(try bob.downloadQueries().map(\.recordCount) == [10, 10])
            #expect(try bob.downloadQuery(named: "low")?.firstPullCompleted == true)
            let status = await bob.status()
            #expect(status.downloadQueries["low"]?.appliedRecords == 10)
            #expect(status.downloadQueries["middle"]?.firstPullCompleted == true)
            #expect(try bob.isFirstPullComplete("tasks"))

            bob = try await setup.bob()
            try bob.deleteDownloadQuery(name: "low")
            #expect(try setup.ranks(bob) == Array(5..<15))
            expectError(.notFound) { try bob.deleteDownloadQuery(name: "low") }

            // t-7 leaves the query on the server (gone), t-9 is deleted (tombstone), t-3 joins it.
            try await setup.setRank("t-7", 100)
            try await setup.setRank("t-3", 6)
            _ = try await setup.fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "tasks", id: "t-9", op: .delete)])
            bob = try await setup.bob()
            try await bob.pull()
            #expect(try setup.ranks(bob) == [5, 6, 6, 8, 10, 11, 12, 13, 14])
            #expect(try bob.record("tasks", id: "t-3") != nil)
            #expect(try bob.record("tasks", id: "t-7") == nil)
            #expect(try bob.record("tasks", id: "t-9") == nil)
        }
    }

    @Test("a record with a pending local change stays when it leaves its query, and leaves after its upload")
    func pendingChangesStay() async throws {
        let setup = try await Setup.start()
        try await withCleanup({ await setup.fixture.stop() }) {
            var bob = try await setup.bob()
            try bob.createDownloadQuery(name: "low", collection: "tasks", filter: Self.low)
            try await bob.pull()
            try bob.patch("tasks", id: "t-8", ["title": "edited offline"])
            try await setup.setRank("t-8", 50)
            try await bob.pull()
            #expect(try bob.record("tasks", id: "t-8")?.data["title"] == "edited offline")
            // Deleting the query keeps it too.
            try bob.createDownloadQuery(name: "also", collection: "tasks", filter: .condition("rank", .lt, 2))
            try bob.deleteDownloadQuery(name: "low")
            #expect(try setup.ranks(bob) == [8], "t-0 and t-1 left with low; the pending t-8 stays")
            bob = try await setup.bob()
            try await bob.sync()
            // Uploaded: no query holds it, so it left the device; the server kept both changes.
            #expect(try bob.record("tasks", id: "t-8") == nil)
            #expect(try bob.pendingOperations().isEmpty)
            let server = try await setup.fixture.pullAll("alice", "tasks", filter: .condition("id", .eq, "t-8")).changes
            #expect(server.first?.data?["title"] == "edited offline")
            #expect(server.first?.data?["rank"] == 50)
        }
    }

    @Test("a changed filter evicts only what no longer matches and downloads only what newly matches, across restarts and a broken pull")
    func filterChange() async throws {
        let setup = try await Setup.start()
        try await withCleanup({ await setup.fixture.stop() }) {
            var bob = try await setup.bob(pageSize: 2)
            try bob.createDownloadQuery(name: "q", collection: "tasks", filter: Self.low)
            try await bob.pull()
            #expect(try setup.ranks(bob) == Array(0..<10))

            try bob.updateDownloadQuery(name: "q", filter: Self.middle)
            // Evicted at once, from the local rows.
            #expect(try setup.ranks(bob) == Array(5..<10))
            #expect(try bob.downloadQuery(named: "q")?.isUpdating == true)
            // A record that stays in the query changes meanwhile.
            _ = try await setup.fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "tasks", id: "t-6", op: .patch, data: ["title": "renamed"])])

            // The pull breaks after its first page; the next one resumes after a restart.
            bob = try await setup.bob(pageSize: 2, streams: false)
            let changesRequests = Mutex(0)
            setup.network.intercept { request in
                guard request.url.path.hasSuffix("/tasks/changes") else { return nil }
                let count = changesRequests.withLock { $0 += 1; return $0 }
                return count > 1 ? TransportResponse(status: 503, headers: [], body: Data(#"{"error":{"code":"unavailable","message":"down"}}"#.utf8)) : nil
            }
            await #expect(throws: CairnError.self) { try await bob.pull() }
            setup.network.intercept(nil)
            #expect(try setup.ranks(bob).count == 7)
            bob = try await setup.bob(pageSize: 2)
            try await bob.pull()
            #expect(try setup.ranks(bob) == Array(5..<15))
            #expect(try bob.record("tasks", id: "t-6")?.data["title"] == "renamed")
            #expect(try bob.downloadQuery(named: "q")?.isUpdating == false)
            // Downloaded after the restart: the 3 new records not yet fetched and the one that changed; the five it
            // already held did not come again.
            #expect(await bob.status().downloadQueries["q"]?.downloadedRecords == 4)

            // A narrower filter downloads nothing.
            try bob.updateDownloadQuery(name: "q", filter: .condition("rank", .eq, 12))
            #expect(try setup.ranks(bob) == [12])
            try await bob.pull()
            #expect(await bob.status().downloadQueries["q"]?.downloadedRecords == 0)
            #expect(try setup.ranks(bob) == [12])
        }
    }

    @Test("a collection pulled whole becomes partial: what no query holds leaves after the queries pulled; it can be pulled whole again")
    func wholeToPartialAndBack() async throws {
        let setup = try await Setup.start()
        try await withCleanup({ await setup.fixture.stop() }) {
            let bob = try await setup.bob()
            try await bob.pull()
            #expect(try setup.ranks(bob).count == 20)
            try bob.patch("tasks", id: "t-19", ["title": "mine"])
            try bob.downloadOnlyThroughQueries("tasks")
            #expect(try setup.ranks(bob).count == 20, "nothing leaves before a pull")
            try await bob.pull()
            #expect(try setup.ranks(bob) == [19], "only the pending record stays")
            try bob.createDownloadQuery(name: "top", collection: "tasks", filter: .condition("rank", .gte, 17))
            try await bob.pull()
            #expect(try setup.ranks(bob) == [17, 18, 19])
            try bob.downloadWholeCollection("tasks")
            #expect(try bob.downloadQueries().isEmpty)
            try await bob.pull()
            #expect(try setup.ranks(bob).count == 20)
        }
    }
}
