import CairnProtocol
import CairnTesting
import Foundation
import Testing
@testable import Cairn

/// A store on a file system mounted read-only (a tmpfs the test mounts and remounts; skipped with the reason printed
/// where mounting is not allowed): even root cannot write there.
@Suite("A read-only store", .serialized)
struct ReadOnlyStoreTests {
    @Test("a store on a read-only file system opens for reading: records, queries and diagnostics work, writes and syncs fail with store_read_only, and it is writable again once its disk is",
          arguments: [false, true])
    func readOnlyStore(encrypted: Bool) async throws {
        guard let disk = SmallFilesystem.mount(megabytes: 16, for: "the read-only store test") else { return }
        defer { disk.unmount() }
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = disk.url.appendingPathComponent("store.sqlite").path
            let key: StoreKey? = encrypted ? .generate() : nil
            let writable = try await fixture.client("alice", store: .file(path)) { $0.storeKey = key }
            for index in 0..<20 { try writable.create("notes", id: "n\(index)", data: ["title": .string("note \(index)")]) }
            try await writable.sync()
            try writable.create("notes", id: "pending", data: ["title": "not uploaded yet"])
            try await writable.close()

            try disk.setReadOnly(true)
            let reader = try await fixture.client("alice", store: .file(path)) { $0.storeKey = key }
            #expect(reader.isReadOnly)
            #expect(try reader.count(Query("notes")) == 21)
            #expect(try reader.record("notes", id: "n3")?.data["title"] == "note 3")
            #expect(try reader.pendingOperations().count == 1)
            _ = try await reader.diagnostics()
            #expect(throws: CairnError.self) { try reader.create("notes", id: "refused", data: ["title": "x"]) }
            do {
                try reader.create("notes", id: "refused", data: ["title": "x"])
            } catch let error as CairnError {
                #expect(error.code == .storeReadOnly, "\(error)")
            }
            do {
                try await reader.sync()
                Issue.record("a read-only store synced")
            } catch let error as CairnError {
                #expect(error.code == .storeReadOnly, "\(error)")
            }
            try await reader.close()

            try disk.setReadOnly(false)
            let again = try await fixture.client("alice", store: .file(path)) { $0.storeKey = key }
            #expect(!again.isReadOnly)
            try again.create("notes", id: "after", data: ["title": "writable again"])
            #expect(try await again.sync().pushed == 2)
            #expect(try await again.verify("notes").matches)
            try await again.close()
        }
    }
}
