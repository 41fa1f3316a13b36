import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Synchronization
import Testing

@Suite("Deleting files offline: queued like record changes, the field cleared at once")
struct FileDeleteTests {
    static let photo = FileAttachment(collection: "notes", id: "n1", field: "photo")

    /// A note on the server whose photo `user` uploaded; returns the photo's server id.
    static func attachedPhoto(_ client: CairnClient) async throws -> String {
        try client.create("notes", id: "n1", data: ["title": "Site visit"])
        let localID = try client.files.upload(from: try TestFiles.make(20_000), name: "site.jpg", attachTo: photo)
        try await client.sync()
        await client.files.waitForUploads()
        try await client.sync()
        let serverID = try client.files.serverID(localID)
        #expect(try client.record("notes", id: "n1")?.data["photo"] == .string(serverID))
        return serverID
    }

    @Test("an offline delete clears the field at once, survives a restart, and deletes the file and the field on the server at the next sync")
    func offlineDeleteReachesTheServer() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", store: .file(path), network: network)
            let bob = try await fixture.client("bob")
            let fileID = try await Self.attachedPhoto(alice)
            try await alice.files.download(fileID)
            #expect(try await alice.files.isAvailableOffline(fileID))

            network.isOnline = false
            try await alice.files.delete(fileID)
            let note = try #require(try alice.record("notes", id: "n1"))
            #expect(note.data["photo"] == nil)
            #expect(note.hasPendingChanges)
            #expect(try await !alice.files.isAvailableOffline(fileID))
            #expect(try alice.files.pendingDeletions().map(\.id) == [fileID])
            await #expect(throws: CairnError.self) { try await alice.files.data(for: fileID) }
            await #expect(throws: CairnError.self) { try await alice.sync() }
            // Nothing reached the server yet.
            #expect(try await bob.files.metadata(fileID).status == .completed)
            try await alice.close()

            let reopened = try await fixture.client("alice", store: .file(path))
            #expect(try reopened.files.pendingDeletions().map(\.id) == [fileID])
            #expect(try reopened.record("notes", id: "n1")?.data["photo"] == nil)
            try await reopened.sync()
            #expect(try reopened.files.pendingDeletions().isEmpty)
            #expect(try reopened.files.failedDeletions().isEmpty)
            #expect(try await bob.files.metadata(fileID).status == .deleted)
            let content = try await fixture.http.send(.GET, "/v1/projects/\(Fixture.project)/files/\(fileID)/content", token: fixture.tokens["bob"])
            #expect(content.status == 409)
            let onServer = try #require(try await fixture.pullAll("rita", "notes").changes.last { $0.id == "n1" })
            #expect(onServer.data?["photo"] == nil)
            #expect(onServer.data?["title"] == "Site visit")
            try await bob.sync()
            #expect(try bob.record("notes", id: "n1")?.data["photo"] == nil)
            #expect(try reopened.record("notes", id: "n1")?.hasPendingChanges == false)
        }
    }

    @Test("deleting a file whose upload is still queued cancels the upload and clears the field; nothing is sent")
    func queuedUploadIsCancelled() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network)
            try alice.create("notes", id: "n1", data: ["title": "Site visit"])
            try await alice.sync()
            network.isOnline = false
            let localID = try alice.files.upload(from: try TestFiles.make(20_000), attachTo: Self.photo)
            #expect(try alice.record("notes", id: "n1")?.data["photo"] == .string(localID))

            try await alice.files.delete(localID)
            #expect(try alice.record("notes", id: "n1")?.data["photo"] == nil)
            #expect(try alice.files.pendingUploads().isEmpty)
            #expect(try alice.files.pendingDeletions().isEmpty)
            #expect(try alice.pendingOperations().isEmpty)
            await #expect(throws: CairnError.self) { try await alice.files.data(for: localID) }

            let filePaths = Mutex<[String]>([])
            network.intercept { request in
                if request.url.path.contains("/files") { filePaths.withLock { $0.append("\(request.method) \(request.url.path)") } }
                return nil
            }
            network.isOnline = true
            try await alice.sync()
            await alice.files.waitForUploads()
            #expect(filePaths.withLock { $0 }.isEmpty)
            #expect(try await fixture.pullAll("rita", "notes").changes.last { $0.id == "n1" }?.data?["photo"] == nil)
        }
    }

    @Test("a refused deletion goes to the failed list and can be retried; a file the server does not know counts as deleted")
    func refusedAndUnknown() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network)
            let fileID = try await Self.attachedPhoto(alice)
            let refuse = Mutex(true)
            network.intercept { request in
                guard request.method == "DELETE", refuse.withLock({ $0 }) else { return nil }
                let body = try? CairnJSON.encode(ErrorEnvelope(error: ErrorBody(code: .forbidden, message: "not yours (test)")))
                return TransportResponse(status: 403, headers: [("Content-Type", "application/json")], body: body ?? Data())
            }
            try await alice.files.delete(fileID, detachFrom: Self.photo)
            try await alice.sync()
            #expect(try alice.files.pendingDeletions().isEmpty)
            let failed = try alice.files.failedDeletions()
            #expect(failed.map(\.id) == [fileID])
            #expect(failed.first?.error?.code == .forbidden)
            // The record change went through all the same.
            #expect(try await fixture.pullAll("rita", "notes").changes.last { $0.id == "n1" }?.data?["photo"] == nil)

            refuse.withLock { $0 = false }
            #expect(try await alice.files.retry(fileID))
            try await alice.sync()
            #expect(try alice.files.failedDeletions().isEmpty)
            #expect(try await alice.files.metadata(fileID).status == .deleted)

            let unknown = UUID().uuidString.lowercased()
            try await alice.files.delete(unknown)
            #expect(alice.hasPendingUpload)
            try await alice.sync()
            #expect(try alice.files.pendingDeletions().isEmpty)
            #expect(try alice.files.failedDeletions().isEmpty)
            #expect(!alice.hasPendingUpload)
        }
    }
}
