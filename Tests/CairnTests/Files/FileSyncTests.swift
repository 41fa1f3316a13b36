import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Files in the SDK: queued uploads, attachments, downloads and the cache", .timeLimit(.minutes(20)))
struct FileSyncTests {
    static let photo = FileAttachment(collection: "notes", id: "n1", field: "photo")

    @Test("with filesOnlyOnUnmeteredNetworks, uploads wait while the network is metered; records still sync")
    func meteredNetwork() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice") { $0.filesOnlyOnUnmeteredNetworks = true }
            alice.networkDidChange(metered: true)
            try await Task.sleep(for: .milliseconds(20))
            try alice.create("notes", id: "n1", data: ["title": "Site visit"])
            let localID = try alice.files.upload(from: try TestFiles.make(10_000), attachTo: Self.photo)
            try await alice.sync()
            try await Task.sleep(for: .milliseconds(200))
            #expect(try alice.files.upload(localID)?.state == .queued)
            #expect(try await fixture.pullAll("rita", "notes").changes.map { $0.id } == ["n1"])
            alice.networkDidChange(metered: false)
            try await Task.sleep(for: .milliseconds(20))
            await alice.files.waitForUploads()
            #expect(try alice.files.upload(localID)?.state == .completed)
        }
    }

    @Test("an attached photo shows its local id offline, uploads after its record is pushed, and reaches another device")
    func attachOfflineThenSync() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network)
            let bob = try await fixture.client("bob")
            network.isOnline = false
            try alice.create("notes", id: "n1", data: ["title": "Site visit"])
            let source = try TestFiles.make(300_000)
            let localID = try alice.files.upload(from: source, name: "site.jpg", contentType: "image/jpeg", attachTo: Self.photo)
            #expect(localID.hasPrefix("local-"))
            #expect(try alice.record("notes", id: "n1")?.data["photo"] == .string(localID))
            // The app can show it offline, and may delete its own file.
            try FileManager.default.removeItem(at: source)
            #expect(try await alice.files.data(for: localID).count == 300_000)
            #expect(try alice.files.pendingUploads().map(\.id) == [localID])
            #expect(await alice.status().pendingFiles == 1)

            network.isOnline = true
            try await alice.sync()
            await alice.files.waitForUploads()
            let job = try #require(try alice.files.upload(localID))
            #expect(job.state == .completed)
            let serverID = try #require(job.serverID)
            // Until the pull brings the server's state, the field shows the server id; after it, the server state does.
            #expect(try alice.record("notes", id: "n1")?.data["photo"] == .string(serverID))
            try await alice.sync()
            #expect(try alice.record("notes", id: "n1")?.data["photo"] == .string(serverID))
            #expect(try alice.record("notes", id: "n1")?.hasPendingChanges == false)
            #expect(await alice.status().pendingFiles == 0)
            #expect(try await alice.verify("notes").matches)

            try await bob.sync()
            let seen = try #require(try bob.record("notes", id: "n1")?.data["photo"]?.stringValue)
            #expect(seen == serverID)
            let bytes = try await bob.files.data(for: seen)
            #expect(bytes == (try Data(contentsOf: try TestFiles.make(300_000))))
            #expect(try await bob.files.isAvailableOffline(seen))
            // Alice kept her copy as the cached file: no download needed.
            #expect(try await alice.files.isAvailableOffline(serverID))
        }
    }

    @Test("the server never sees a record pointing at an incomplete file; a local id written by the app is never pushed")
    func neverPointsAtIncompleteFiles() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.create("notes", id: "n1", data: ["title": "a"])
            let localID = try alice.files.upload(from: try TestFiles.make(1000), attachTo: Self.photo)
            // The app writes the record back with the local id it read, before anything was uploaded.
            var data = try #require(try alice.record("notes", id: "n1")?.data)
            data["title"] = "b"
            try alice.save("notes", id: "n1", data: data)
            #expect(try alice.record("notes", id: "n1")?.data["photo"] == .string(localID))
            try await alice.push()
            let pushed = try await fixture.pullAll("bob", "notes").changes.first { $0.id == "n1" }
            #expect(pushed?.data?["title"] == "b")
            #expect(pushed?.data?["photo"] == nil)
            await alice.files.waitForUploads()
            try await alice.sync()
            let final = try await fixture.pullAll("bob", "notes").changes.first { $0.id == "n1" }
            let serverID = try #require(try alice.files.upload(localID)?.serverID)
            #expect(final?.data?["photo"] == .string(serverID))
            #expect(final?.data?["title"] == "b")
        }
    }

    @Test("a queued upload survives closing the client and runs after reopening")
    func survivesRestart() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let network = SwitchableTransport()
            let localID: String
            do {
                let alice = try await fixture.client("alice", store: .file(path), network: network)
                try alice.create("notes", id: "n1", data: ["title": "a"])
                try await alice.sync()
                network.isOnline = false
                localID = try alice.files.upload(from: try TestFiles.make(5000), attachTo: Self.photo)
                await alice.files.waitForUploads()
                #expect(try alice.files.upload(localID)?.state == .queued)
                // Closed, as the test says: a client left open keeps retrying on its offline network beside the reopened
                // one, and its failed attempt can push the job's next attempt past the reopened client's wait.
                try await alice.close()
            }
            let reopened = try await fixture.client("alice", store: .file(path))
            #expect(try reopened.files.pendingUploads().map(\.id) == [localID])
            #expect(try reopened.record("notes", id: "n1")?.data["photo"] == .string(localID))
            try await reopened.sync()
            await reopened.files.waitForUploads()
            #expect(try reopened.files.upload(localID)?.state == .completed)
        }
    }

    @Test("a file the server refuses goes to the failed list and leaves record sync working; retry and discard")
    func failedUploadsNeverBlockRecords() async throws {
        let fixture = try await Fixture.start { $0.maximumFileBytes = 1000 }
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.create("notes", id: "n1", data: ["title": "a"])
            try await alice.sync()
            let big = try alice.files.upload(from: try TestFiles.make(5000), attachTo: Self.photo)
            await alice.files.waitForUploads()
            let failed = try alice.files.failedUploads()
            #expect(failed.map(\.id) == [big])
            #expect(failed.first?.error?.code == .fileTooLarge)
            #expect(await alice.status().failedFiles == 1)
            // Records still sync.
            try alice.patch("notes", id: "n1", ["title": "b"])
            try alice.create("notes", id: "n2", data: ["title": "c"])
            let summary = try await alice.sync()
            #expect(summary.pushed == 2)
            #expect(try alice.record("notes", id: "n1")?.data["photo"] == .string(big))
            try await alice.files.discard(big)
            #expect(try alice.files.failedUploads().isEmpty)
            #expect(try alice.record("notes", id: "n1")?.data["photo"] == nil)
            #expect(try alice.record("notes", id: "n1")?.data["title"] == "b")
        }
    }

    @Test("files over the configured limit are refused when queued")
    func sizeCheckedWhenQueued() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice") { $0.maximumFileBytes = 100 }
            #expect(throws: CairnError.self) { try alice.files.upload(from: try TestFiles.make(101)) }
            do {
                _ = try alice.files.upload(from: try TestFiles.make(101))
            } catch let error as CairnError {
                #expect(error.code == .fileTooLarge)
            }
            #expect(try alice.files.pendingUploads().isEmpty)
        }
    }

    @Test("the cache keeps at most its bound, evicting the least recently used; pinned files stay")
    func cacheBound() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            var ids: [String] = []
            for index in 0..<6 {
                let local = try alice.files.upload(from: try TestFiles.make(100_000, seed: UInt8(index)))
                await alice.files.waitForUploads()
                ids.append(try #require(try alice.files.upload(local)?.serverID))
            }
            let bob = try await fixture.client("bob") { $0.fileCacheBytes = 250_000 }
            try await bob.files.pin(ids[0])
            for id in ids.dropFirst() {
                _ = try await bob.files.data(for: id)
                let usage = try bob.files.cacheUsage()
                #expect(usage.bytes <= 250_000 + 100_000)
            }
            #expect(try await bob.files.isAvailableOffline(ids[0]))
            #expect(try await bob.files.isAvailableOffline(ids[5]))
            #expect(try await !bob.files.isAvailableOffline(ids[1]))
            // Evicted files download again on demand.
            #expect(try await bob.files.data(for: ids[1]).count == 100_000)
        }
    }

    @Test("search, rename, retag, publish and delete go through the server")
    func serverFiles() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let local = try alice.files.upload(from: try TestFiles.make(10), name: "a.txt", tags: ["x"])
            await alice.files.waitForUploads()
            let id = try alice.files.serverID(local)
            #expect(try await alice.files.search(FileSearch(tags: ["x"])).map(\.id) == [id])
            #expect(try await alice.files.rename(local, to: "b.txt").name == "b.txt")
            #expect(try await alice.files.retag(id, ["y"]).tags == ["y"])
            #expect(try await alice.files.setPublic(id, true).public)
            #expect(try await fixture.http.send(.GET, "/v1/public/files/\(id)").status == 200)
            try await alice.files.delete(id)
            try await alice.sync()
            #expect(try await alice.files.metadata(id).status == .deleted)
            #expect(try await alice.files.search().isEmpty)
        }
    }

    @Test("prefetch downloads a collection's files after a pull, within the cache bound")
    func prefetch() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            for index in 0..<3 {
                try alice.create("notes", id: "p\(index)", data: ["title": .string("photo \(index)")])
                try alice.files.upload(
                    from: try TestFiles.make(100_000, seed: UInt8(index)), attachTo: FileAttachment(collection: "notes", id: "p\(index)", field: "photo"))
            }
            try await alice.sync()
            await alice.files.waitForUploads()
            let bob = try await fixture.client("bob") { configuration in
                configuration.prefetchFiles = ["notes"]
                configuration.fileCacheBytes = 250_000
            }
            try await bob.sync()
            let photos = try bob.records(Query("notes")).compactMap { $0.data["photo"]?.stringValue }
            #expect(photos.count == 3)
            // The prefetch runs after the pull, in the background: two files fit the bound, the third does not.
            while try bob.files.cacheUsage().files < 2 { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(200))
            let usage = try bob.files.cacheUsage()
            #expect(usage.files == 2)
            #expect(usage.bytes <= 250_000)
        }
    }

    @Test("the status stream reports an upload's progress and the pending count, and a download's progress")
    func progress() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let statuses = await alice.statusUpdates()
            let seen = Task {
                var transfers: [FileTransfer] = []
                var pending: [Int] = []
                for await status in statuses {
                    transfers += status.fileTransfers.values
                    pending.append(status.pendingFiles)
                }
                return (transfers, pending)
            }
            let local = try alice.files.upload(from: try TestFiles.make(6_000_000), name: "big.bin")
            await alice.files.waitForUploads()
            let id = try alice.files.serverID(local)
            let bob = try await fixture.client("bob")
            let bobStatuses = await bob.statusUpdates()
            let bobSeen = Task {
                var transfers: [FileTransfer] = []
                for await status in bobStatuses {
                    transfers += status.fileTransfers.values
                    if transfers.contains(where: { $0.fraction == 1 }) { break }
                }
                return transfers
            }
            _ = try await bob.files.data(for: id)
            #expect(await bob.status().fileTransfers.isEmpty, "a finished download leaves the status")
            let downloads = await bobSeen.value
            #expect(downloads.allSatisfy { $0.direction == .download && $0.totalBytes == 6_000_000 })
            #expect(downloads.contains { $0.fraction == 1 })
            seen.cancel()
            let (uploads, pending) = await seen.value
            #expect(uploads.contains { $0.direction == .upload && $0.name == "big.bin" && $0.fraction == 1 })
            #expect(uploads.contains { $0.direction == .upload && $0.fraction < 1 })
            #expect(pending.contains(1))
            #expect(await alice.status().pendingFiles == 0)
            #expect(await alice.status().fileTransfers.isEmpty, "a finished upload leaves the status")
        }
    }

    @Test("an upload the server keeps failing (500 on every file request) is retried, then moves to the failed list, while records sync")
    func keepsFailing() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            network.intercept { request in
                guard request.url.path.contains("/files") else { return nil }
                return TransportResponse(
                    status: 500, headers: [], body: Data(#"{"error":{"code":"internal_error","message":"test"}}"#.utf8))
            }
            let alice = try await fixture.client("alice", network: network) { $0.maximumFileAttempts = 3 }
            try alice.create("notes", id: "n1", data: ["title": "a"])
            try await alice.sync()
            let local = try alice.files.upload(from: try TestFiles.make(1000), attachTo: Self.photo)
            for index in 0..<3 {
                try alice.patch("notes", id: "n1", ["title": .string("edit \(index)")])
                #expect(try await alice.sync().pushed == 1)
            }
            await alice.files.waitForUploads()
            let failed = try #require(try alice.files.upload(local))
            #expect(failed.state == .failed)
            #expect(failed.attempts == 2)
            #expect(failed.error?.code == .internalError)
            #expect(try await fixture.pullAll("bob", "notes").changes.first?.data?["title"] == "edit 2")
        }
    }
}
