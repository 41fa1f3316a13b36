import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Private files from the SDK: a source, permissions kept through the upload queue, sharing", .timeLimit(.minutes(20)))
struct FilePermissionsClientTests {
    @Test("a private upload is hidden from other members until shared with them, and hidden again once unshared")
    func privateUploadAndSharing() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            var alice = try await fixture.client("alice", store: .file(path))
            let bytes = Data("quarterly figures".utf8)
            let localID = try alice.files.upload(
                data: bytes, name: "figures.txt", contentType: "text/plain", source: "scan", permissions: FilePermissions(access: .private))
            // The permissions live in the queue: they survive a relaunch before the upload.
            try await alice.close()
            alice = try await fixture.client("alice", store: .file(path))
            try await alice.sync()
            await alice.files.waitForUploads()
            let id = try alice.files.serverID(localID)
            let metadata = try await alice.files.metadata(id)
            #expect(metadata.permissions == FilePermissions(access: .private) && metadata.source == "scan")

            let bob = try await fixture.client("bob")
            #expect(try await !bob.files.search().contains { $0.id == id })
            let hidden = await #expect(throws: CairnError.self) { _ = try await bob.files.data(for: id) }
            #expect(hidden?.code == .notFound)
            let refused = await #expect(throws: CairnError.self) { _ = try await bob.files.share(id, with: ["bob"]) }
            #expect(refused?.code == .notFound)

            #expect(try await alice.files.share(id, with: ["bob"]).permissions.sharedWith == ["bob"])
            #expect(try await bob.files.data(for: id) == bytes)
            #expect(try await bob.files.search().contains { $0.id == id })
            let forbidden = await #expect(throws: CairnError.self) { _ = try await bob.files.rename(id, to: "mine.txt") }
            #expect(forbidden?.code == .forbidden)

            #expect(try await alice.files.unshare(id, from: ["bob"]).permissions.sharedWith.isEmpty)
            let gone = await #expect(throws: CairnError.self) { _ = try await bob.files.metadata(id) }
            #expect(gone?.code == .notFound)
            #expect(try await alice.files.setPermissions(id, .project).permissions == .project)
            #expect(try await bob.files.metadata(id).name == "figures.txt")
            // Private and public together are refused before anything is queued.
            let both = #expect(throws: CairnError.self) {
                _ = try alice.files.upload(data: bytes, name: "x", public: true, permissions: FilePermissions(access: .private))
            }
            #expect(both?.code == .invalidArgument)
            try await alice.close()
        }
    }
}
