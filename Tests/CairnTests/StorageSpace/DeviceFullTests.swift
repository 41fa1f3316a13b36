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

    @Test("on a full device a cache write and a file download fail with storage_full, keep nothing half-written, and both work once space is freed")
    func fullDeviceCachesAndFiles() async throws {
        guard let disk = SmallFilesystem.mount(megabytes: 24, for: "the device's full-disk test of caches and files") else { return }
        defer { disk.unmount() }
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice", store: .file(disk.url.appendingPathComponent("store.sqlite").path))
            let bob = try await fixture.client("bob")
            // A file of 1 MB another device uploaded, for alice to download onto the full disk.
            let bytes = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
            let localID = try bob.files.upload(data: bytes, name: "scan.bin")
            try await bob.sync()
            await bob.files.waitForUploads()
            let fileID = try #require(try bob.files.upload(localID)?.serverID)
            let contacts = try alice.jsonCache(name: "contacts", fields: [.string("email")])
            #expect(try contacts.cache([["id": "c-0", "email": "ana@example.com"]]) == 1)
            let entries: [JSONValue] = (1...4).map { .object(["id": .string("c-\($0)"), "email": .string(String(repeating: "e", count: 128 * 1024))]) }

            try disk.fill(leaving: 64 * 1024)
            do {
                _ = try contacts.cache(entries)
                Issue.record("a cache write of 512 KB succeeded on a full disk")
            } catch let error as CairnError {
                #expect(error.code == .storageFull, "\(error)")
            }
            do {
                _ = try await alice.files.data(for: fileID)
                Issue.record("a download of 1 MB succeeded on a full disk")
            } catch let error as CairnError {
                #expect(error.code == .storageFull, "\(error)")
            }
            // Nothing half-written: the cache holds what it held, and the file is not kept.
            #expect(try contacts.count() == 1)
            #expect(try await !alice.files.isAvailableOffline(fileID))

            disk.free()
            #expect(try contacts.cache(entries) == 4)
            #expect(try contacts.count() == 5)
            #expect(try await alice.files.data(for: fileID) == bytes)
            try await alice.close()
            try await bob.close()
        }
    }
}
