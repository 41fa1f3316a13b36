import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Download queries that prefetch their records' files", .timeLimit(.minutes(20)))
struct DownloadQueryPrefetchTests {
    @Test("a query with prefetchFiles downloads its records' files after a sync; a query without does not")
    func prefetchThroughQuery() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            for (id, done) in [("kept", true), ("plain", false)] {
                try alice.create("notes", id: id, data: ["title": .string(id), "done": .bool(done)])
                _ = try alice.files.upload(
                    data: Data(repeating: done ? 1 : 2, count: 20_000), name: "\(id).bin",
                    attachTo: FileAttachment(collection: "notes", id: id, field: "photo"))
            }
            try await alice.sync()
            await alice.files.waitForUploads()

            let bob = try await fixture.client("bob")
            try bob.createDownloadQuery(name: "done", collection: "notes", filter: .condition("done", .eq, true), prefetchFiles: true)
            try bob.createDownloadQuery(name: "open", collection: "notes", filter: .condition("done", .eq, false))
            #expect(try bob.downloadQuery(named: "done")?.prefetchFiles == true)
            #expect(try bob.downloadQuery(named: "open")?.prefetchFiles == false)
            try await bob.sync()
            #expect(try bob.records(Query("notes")).count == 2)
            let kept = try #require(try bob.record("notes", id: "kept")?.data["photo"]?.stringValue)
            let plain = try #require(try bob.record("notes", id: "plain")?.data["photo"]?.stringValue)
            try await waitUntil { try await bob.files.isAvailableOffline(kept) }
            #expect(try await !bob.files.isAvailableOffline(plain))
            // Asked for by name, the other query's files come too.
            #expect(try await bob.files.prefetch(query: "open") == 1)
            #expect(try await bob.files.isAvailableOffline(plain))
            await #expect(throws: CairnError.self) { try await bob.files.prefetch(query: "nope") }
        }
    }
}
