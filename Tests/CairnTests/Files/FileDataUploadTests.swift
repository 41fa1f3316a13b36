import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Files uploaded from memory, with a progress stream per transfer", .timeLimit(.minutes(20)))
struct FileDataUploadTests {
    @Test("upload(data:) uploads bytes held in memory; progress(id) follows that upload to its end; another device reads the bytes")
    func uploadData() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.create("notes", id: "n1", data: ["title": "Site visit"])
            let bytes = Data((0..<600_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let id = try alice.files.upload(
                data: bytes, name: "site.bin", contentType: "application/octet-stream",
                attachTo: FileAttachment(collection: "notes", id: "n1", field: "photo"))
            let progress = await alice.files.progress(id)
            try await alice.sync()
            var fractions: [Double] = []
            for await transfer in progress { fractions.append(transfer.fraction) }
            #expect(fractions == fractions.sorted(), "the fraction only grows")
            await alice.files.waitForUploads()
            #expect(try alice.files.upload(id)?.state == .completed)
            // A finished transfer's stream ends at once.
            var after = 0
            for await _ in await alice.files.progress(id) { after += 1 }
            #expect(after == 0)

            let bob = try await fixture.client("bob")
            try await bob.sync()
            let fileID = try #require(try bob.record("notes", id: "n1")?.data["photo"]?.stringValue)
            #expect(try await bob.files.data(for: fileID) == bytes)
        }
    }
}
