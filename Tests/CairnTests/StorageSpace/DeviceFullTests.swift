import CairnProtocol
import CairnTesting
import Foundation
import Testing
@testable import Cairn

/// The SDK's store on a real small filesystem (a tmpfs the test mounts; skipped with the reason printed where
/// mounting is not allowed), filled on purpose.
@Suite("A full disk on the device", .serialized)
struct DeviceFullTests {
    @Test("on a full device writes and syncs fail with storage_full, the store keeps its data, queue and cursors, diagnostics say the device is out of space, and freed space lets the sync finish")
    func fullDevice() async throws {
        guard let disk = SmallFilesystem.mount(megabytes: 48, for: "the device's full-disk test") else { return }
        defer { disk.unmount() }
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice", store: .file(disk.url.appendingPathComponent("store.sqlite").path))
            try await alice.sync()
            try alice.create("notes", id: "mine", data: ["title": "written before the disk filled"])
            // 1.5 MB of records to pull, onto a disk left 128 KB: small, so the tests beside this one keep their memory.
            let title = JSONValue.string(String(repeating: "b", count: 1000))
            for start in stride(from: 0, to: 1500, by: 500) {
                let written = try await fixture.push("bob", (start..<start + 500).map {
                    SyncOperation(opId: newOpID(), collection: "notes", id: "b-\($0)", op: .create, data: ["title": title])
                })
                #expect(written.allSatisfy { $0.status == .applied })
            }
            let cursor = try alice.store.pullStates.state("notes").cursor

            try disk.fill(leaving: 128 * 1024)
            #expect(throws: CairnError.self) {
                try alice.create("notes", id: "big", data: ["title": .string(String(repeating: "y", count: 512 * 1024))])
            }
            do {
                try alice.create("notes", id: "big", data: ["title": .string(String(repeating: "y", count: 512 * 1024))])
            } catch let error as CairnError {
                #expect(error.code == .storageFull)
            }
            do {
                try await alice.sync()
                Issue.record("a sync that pulls 1.5 MB onto a full disk succeeded")
            } catch let error as CairnError {
                #expect(error.code == .storageFull, "\(error)")
            }
            // Nothing was lost or half-applied: the cursor is where it was, the local write is there (queued, or
            // uploaded and still queued until its answer could be stored).
            #expect(try alice.store.pullStates.state("notes").cursor == cursor)
            #expect(try alice.record("notes", id: "mine") != nil)
            #expect(try alice.record("notes", id: "big") == nil)
            let report = try await alice.diagnostics()
            #expect(report.verdict == .stuck)
            #expect(report.explanation.contains("out of space"), "\(report.explanation)")

            disk.free()
            try await alice.sync()
            #expect(try alice.records(Query("notes")).count == 1501)
            #expect(try alice.pendingOperations().isEmpty)
            #expect(try await fixture.pullAll("bob", "notes").changes.contains { $0.id == "mine" })
            let after = try await alice.diagnostics()
            #expect(after.verdict == .upToDate, "\(after.explanation)")
            try await alice.close()
        }
    }
}
