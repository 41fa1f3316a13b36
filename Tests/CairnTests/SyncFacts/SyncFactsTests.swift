import CairnProtocol
import CairnTesting
import Foundation
import Synchronization
import Testing

@testable import Cairn

@Suite("Sync facts that survive a relaunch, the schema fetched without applying it, offline unregistering", .timeLimit(.minutes(20)))
struct SyncFactsTests {
    @Test("the last upload and download times and rates survive a reopen, in the status and in the diagnostics")
    func factsSurviveReopen() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            defer { try? FileManager.default.removeItem(atPath: path) }
            // The times come from an injected wall clock that stands still: the store must give back exactly them.
            let wall = ManualWallClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded()))
            var alice = try await fixture.client("alice", store: .file(path)) { $0.wallClock = wall }
            let initial = await alice.status()
            #expect(initial.lastUpload == nil && initial.lastUploadRate == nil)
            for index in 0..<50 { try alice.create("notes", id: "n-\(index)", data: ["title": "t"]) }
            try await alice.sync()
            let before = await alice.status()
            #expect(before.lastUpload == wall.now() && before.lastDownload == wall.now())
            #expect((before.lastUploadRate ?? 0) > 0 && (before.lastDownloadRate ?? 0) > 0)
            try await alice.close()

            alice = try await fixture.client("alice", store: .file(path)) { $0.wallClock = wall }
            let after = await alice.status()
            #expect(after.lastUpload == wall.now() && after.lastDownload == wall.now())
            #expect(after.lastUploadRate == before.lastUploadRate && after.lastDownloadRate == before.lastDownloadRate)
            let report = try await alice.diagnostics()
            #expect(report.lastUpload == after.lastUpload && report.lastDownloadRate == after.lastDownloadRate)
            try await alice.close()
        }
    }

    @Test("estimateDownload counts each snapshot to come on the server (download queries by their filter), downloads nothing, and times it by the last rate")
    func downloadEstimate() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            for index in 0..<30 { try alice.create("notes", id: "n-\(index)", data: ["title": "t"]) }
            for index in 0..<5 { try alice.create("tasks", id: "t-\(index)", data: ["title": "t", "rank": .integer(Int64(index))]) }
            try alice.create("logs", id: "l", data: ["message": "m"])
            try await alice.sync()

            let bob = try await fixture.client("bob")
            try bob.createDownloadQuery(name: "first", collection: "tasks", filter: .condition("rank", .lt, 2))
            let before = try await bob.estimateDownload()
            #expect(before.snapshots == ["notes": 30, "first": 2, "logs": 1])
            #expect(before.records == 33 && before.incremental.isEmpty)
            #expect(before.perSecond == nil && before.timeNeeded == nil)
            #expect(try bob.count(Query("notes")) == 0)

            try await bob.sync()
            let after = try await bob.estimateDownload()
            #expect(after.snapshots.isEmpty && after.records == 0)
            #expect(after.incremental == ["logs", "notes", "tasks"])
            #expect((after.perSecond ?? 0) > 0 && after.timeNeeded == .zero)
        }
    }

    @Test("an estimate has a time left from the last run's rate before its own first batch or page")
    func estimateFromPriorRate() {
        let fresh = TransferMeter(total: 10, priorRate: 5)
        #expect(fresh.estimate.perSecond == 5)
        #expect(fresh.estimate.timeLeft == .seconds(2))
        #expect(TransferMeter(total: 10).estimate.timeLeft == nil)
    }

    @Test("fetchSchema says how the server's schema differs and applies nothing; the next sync does")
    func fetchSchema() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            #expect(try await alice.fetchSchema().isEmpty)
            var grown = Fixture.schema
            grown.collections[0].fields.append(FieldSchema(name: "priority", type: .integer))
            grown.collections.append(CollectionSchema(name: "sites", fields: [FieldSchema(name: "name", type: .string)]))
            try await fixture.server.server.admin.setSchema(project: Fixture.project, grown)
            let difference = try await alice.fetchSchema()
            #expect(difference.newCollections == ["sites"])
            #expect(difference.newFields == ["notes": ["priority"]])
            #expect(difference.removedCollections.isEmpty && difference.removedFields.isEmpty && difference.changedFields.isEmpty)
            #expect(alice.schema?.collections.map(\.name).contains("sites") == false, "nothing applied")
            try await alice.sync()
            #expect(alice.schema?.collections.map(\.name).contains("sites") == true)
            #expect(try await alice.fetchSchema().isEmpty)
        }
    }

    @Test("unregister(fromServer: false) forgets the client offline; the server still lists it; queued changes stay")
    func unregisterLocally() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            defer { try? FileManager.default.removeItem(atPath: path) }
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", store: .file(path), network: network)
            let id = try #require(alice.clientID)
            try alice.create("notes", id: "kept", data: ["title": "queued"])
            network.isOnline = false
            let before = network.requestCount
            await #expect(throws: CairnError.self) { try await alice.unregister(fromServer: false, deleteStore: true) }
            try await alice.unregister(fromServer: false)
            #expect(network.requestCount == before, "nothing was sent")
            let listed = try await fixture.http.send(.GET, "/v1/projects/\(Fixture.project)/clients", token: fixture.tokens["ada"])
                .decode(AdminPage<ClientSummary>.self).items.map(\.clientId)
            #expect(listed.contains(id))
            // Opened again online: a new client, and the queued change goes with it.
            let again = try await fixture.client("alice", store: .file(path))
            #expect(again.clientID != nil && again.clientID != id)
            #expect(try await again.sync().pushed == 1)
            try await again.close()
        }
    }

    @Test("initialDownload .awaitAtOpen: open returns with the store downloaded; the default returns at once")
    func awaitAtOpen() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("bob", (0..<30).map { SyncOperation(opId: newOpID(), collection: "notes", id: "n-\($0)", op: .create, data: ["title": "t"]) })
            let waiting = try await fixture.client("alice") { $0.initialDownload = .awaitAtOpen }
            #expect(try waiting.records(Query("notes")).count == 30)
            #expect(try waiting.isFirstPullComplete("notes"))
            let plain = try await fixture.client("alice")
            #expect(try plain.records(Query("notes")).isEmpty)
        }
    }

    @Test("initialDownload .awaitAtOpen after a user switch: the cleared store is downloaded for the new user before open returns, with progress told")
    func awaitAtOpenAfterUserSwitch() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            _ = try await fixture.push("bob", (0..<12).map { SyncOperation(opId: newOpID(), collection: "notes", id: "n-\($0)", op: .create, data: ["title": "t"]) })
            let alice = try await fixture.client("alice", store: .file(path)) { $0.initialDownload = .awaitAtOpen }
            try alice.create("notes", id: "alice-draft", data: ["title": "never uploaded"])
            try await alice.close()
            _ = try await fixture.push("bob", [SyncOperation(opId: newOpID(), collection: "notes", id: "n-late", op: .create, data: ["title": "t"])])

            let told = Mutex<[SyncStatus]>([])
            let bob = try await fixture.client("bob", store: .file(path)) { configuration in
                configuration.userChange = .discard
                configuration.initialDownload = .awaitAtOpen
                configuration.pageSize = 5
                configuration.initialDownloadProgress = { status in told.withLock { $0.append(status) } }
            }
            // alice's data and draft are gone; bob's store holds every note, the late one too.
            #expect(try bob.records(Query("notes")).count == 13)
            #expect(try bob.record("notes", id: "alice-draft") == nil)
            #expect(try bob.isFirstPullComplete("notes"))
            let statuses = told.withLock { $0 }
            #expect(statuses.last?.collections["notes"]?.firstPullCompleted == true)
            #expect(statuses.last?.collections["notes"]?.appliedRecords == 13)
            try await bob.close()
        }
    }
}
