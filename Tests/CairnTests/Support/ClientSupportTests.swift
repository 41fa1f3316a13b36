import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// Unregistering a device, uploading diagnostics and pinging the server, end to end against a real server.
@Suite("Support: unregister, diagnostics upload, ping")
struct ClientSupportTests {
    static func clientIDs(_ fixture: Fixture) async throws -> [String] {
        try await fixture.server.server.admin.clients(project: Fixture.project).items.map(\.clientId)
    }

    /// alice's store with a change the server refuses (a free-form field the schema then declares an integer).
    static func refusedChange(_ fixture: Fixture, _ client: CairnClient, marker: String) async throws {
        try client.save("notes", id: "n1", data: ["title": .string(marker), "priority": .string(marker)])
        var grown = Fixture.schema
        grown.collections[0].fields.append(FieldSchema(name: "priority", type: .integer))
        try await fixture.server.server.admin.setSchema(project: Fixture.project, grown)
        try await client.sync()
        #expect(try client.failedOperations().count == 1)
    }

    @Test("unregister uploads what waits, then the server no longer lists the client; deleteStore removes the store's files")
    func unregisterPushesFirst() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
            let alice = try await fixture.client("alice", store: .file(path))
            let bob = try await fixture.client("bob")
            let id = try #require(alice.clientID)
            #expect(try await Self.clientIDs(fixture).contains(id))
            try alice.create("notes", id: "n1", data: ["title": "written just before the device was handed back"])

            try await alice.unregister(deleteStore: true)
            #expect(try await !Self.clientIDs(fixture).contains(id))
            #expect(try await Self.clientIDs(fixture) == [try #require(bob.clientID)])
            try await bob.sync()
            #expect(try bob.record("notes", id: "n1")?.data["title"] == "written just before the device was handed back")
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(throws: CairnError.self) { try alice.records(Query("notes")) }
        }
    }

    @Test("unregister refuses while a change is refused by the server, changing nothing; discarding, it keeps the store without it")
    func unregisterRefusesPendingChanges() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
            let alice = try await fixture.client("alice", store: .file(path))
            let id = try #require(alice.clientID)
            try await Self.refusedChange(fixture, alice, marker: "kept")
            do {
                try await alice.unregister()
                Issue.record("unregister went on with a refused change")
            } catch let error as CairnError {
                #expect(error.code == .pendingChanges)
            }
            #expect(try await Self.clientIDs(fixture) == [id])
            #expect(try alice.failedOperations().count == 1)

            try await alice.unregister(discardingPendingChanges: true)
            #expect(try await Self.clientIDs(fixture).isEmpty)
            #expect(FileManager.default.fileExists(atPath: path))
            // Opened again (connected), the kept store is a new client, with nothing left to upload.
            let reopened = try await fixture.client("alice", store: .file(path))
            let newID = try #require(reopened.clientID)
            #expect(newID != id)
            #expect(try await Self.clientIDs(fixture) == [newID])
            #expect(try reopened.failedOperations().isEmpty && reopened.pendingOperations().isEmpty)
            #expect(try reopened.record("notes", id: "n1") == nil)
            try await reopened.close()
        }
    }

    @Test("an uploaded diagnostics report holds no record data and no file name; an admin reads it")
    func diagnosticsUpload() async throws {
        let marker = "MARKER-\(UUID().uuidString.prefix(8))"
        let fixture = try await Fixture.start { $0.maximumFileBytes = 1000 }
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try await Self.refusedChange(fixture, alice, marker: marker)
            let folder = TestScratch.url("cairn-support")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("\(marker)-site.jpg")
            try TestFiles.bytes(5000, seed: 3).write(to: file)
            _ = try alice.files.upload(from: file)
            await alice.files.waitForUploads()
            #expect(try alice.files.failedUploads().count == 1)
            // Locally the report names the file; the record data is in neither.
            let local = try await alice.diagnostics()
            #expect(local.failedFiles.map(\.name) == [file.lastPathComponent])

            let receipt = try await alice.uploadDiagnostics()
            #expect(receipt.clientId == alice.clientID)
            let stored = try await fixture.server.server.admin.diagnostics(project: Fixture.project, clientID: receipt.clientId)
            let text = stored.report.jsonText()
            #expect(!text.contains(marker), "\(text)")
            #expect(text.utf8.count == receipt.bytes)
            let report = try CairnJSON.decode(Diagnostics.self, from: stored.report.jsonData())
            #expect(report.verdict == .stuck)
            #expect(report.failedUploads.map(\.id) == ["n1"])
            #expect(report.failedFiles.map(\.name) == ["(withheld)"])
            #expect(report.user == "alice" && report.project == Fixture.project)
            #expect(stored.client.user == "alice" && stored.client.device == "test-alice")
        }
    }

    @Test("ping: a live server answers with its protocol and release; a closed port is unreachable, without throwing")
    func ping() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice", network: nil)
            let answer = await alice.ping()
            #expect(answer.reachable && answer.isCompatible)
            #expect(answer.protocolVersion == CairnVersion.protocolVersion && answer.serverVersion == CairnVersion.release)
            #expect((answer.roundTrip ?? .zero) > .zero && answer.problem == nil)

            try await withClosedLoopbackPort { port in
                var configuration = CairnConfiguration(
                    serverURL: URL(string: "http://127.0.0.1:\(port)")!, project: Fixture.project, device: "offline",
                    credentials: .password(user: "alice", password: TestServer.password), store: .inMemory)
                configuration.connectOnOpen = false
                configuration.localCollections = [CollectionSchema(name: "drafts", fields: [FieldSchema(name: "text", type: .string)])]
                let offline = try await CairnClient.open(configuration)
                let closed = await offline.ping()
                #expect(!closed.reachable && !closed.isCompatible && closed.protocolVersion == nil)
                #expect(closed.problem?.code == .networkUnavailable)
            }
        }
    }
}
