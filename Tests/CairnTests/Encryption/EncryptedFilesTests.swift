import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@testable import Cairn

/// The files of an encrypted store: queued uploads, cached downloads and broken-off downloads hold no readable byte.
@Suite("Encryption: the store's files")
struct EncryptedFilesTests {
    static let key = try! StoreKey.raw(Data(repeating: 9, count: 32))

    /// A file whose bytes hold the marker again and again.
    static func markerFile(bytes: Int) throws -> (url: URL, data: Data) {
        var data = Data()
        var index = 0
        while data.count < bytes {
            data.append(Data("\(StoreCipherTests.marker) line \(index)\n".utf8))
            index += 1
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-marker-\(UUID().uuidString).txt")
        try data.write(to: url)
        return (url, data)
    }

    /// Every file under `folder` (its subfolders too) where some form of the marker appears.
    static func markersFound(under folder: String) throws -> [String] {
        var found: [String] = []
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        while let name = walker.nextObject() as? String {
            let url = URL(fileURLWithPath: folder).appendingPathComponent(name)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            let data = try Data(contentsOf: url)
            for (form, bytes) in StoreCipherTests.markerForms where data.range(of: bytes) != nil { found.append("\(name): \(form)") }
        }
        return found
    }

    static func folder(of client: CairnClient) throws -> String {
        guard case .file(let path) = client.configuration.store else { throw CairnError.invalid("a store in memory") }
        return URL(fileURLWithPath: path).deletingLastPathComponent().path
    }

    @Test("queued uploads, cached downloads and records hold no marker in an encrypted store's folder; a plaintext one shows them", arguments: [false, true])
    func markers(encrypted: Bool) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let configure: (inout CairnConfiguration) -> Void = { $0.storeKey = encrypted ? Self.key : nil }
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", store: .file(Fixture.temporaryStorePath()), network: network, configure: configure)
            let bob = try await fixture.client("bob", store: .file(Fixture.temporaryStorePath()), configure: configure)
            let (source, data) = try Self.markerFile(bytes: 300_000)
            network.isOnline = false
            try alice.create("notes", id: "n1", data: ["title": .string(StoreCipherTests.marker)])
            let localID = try alice.files.upload(from: source, name: "marker.txt", attachTo: FileAttachment(collection: "notes", id: "n1", field: "photo"))
            try FileManager.default.removeItem(at: source)
            // Queued, offline: the copy waits in the store's folder.
            #expect(try await alice.files.data(for: localID) == data)
            let aliceFolder = try Self.folder(of: alice)
            if encrypted {
                #expect(try Self.markersFound(under: aliceFolder) == [])
            } else {
                #expect(try Self.markersFound(under: aliceFolder).contains { $0.hasPrefix("store.sqlite-files/uploads/") })
            }

            network.isOnline = true
            try await alice.sync()
            await alice.files.waitForUploads()
            let serverID = try #require(try alice.files.upload(localID)?.serverID)
            #expect(try await alice.files.metadata(serverID).sha256 == TestFiles.sha256(data))
            try await bob.sync()
            #expect(try await bob.files.data(for: serverID) == data)
            var streamed = Data()
            try await bob.files.read(serverID, chunk: 10_000) { streamed.append($0) }
            #expect(streamed == data)
            let copy = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-copy-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: copy) }
            try await bob.files.copy(serverID, to: copy)
            #expect(try Data(contentsOf: copy) == data)
            let bobFolder = try Self.folder(of: bob)
            if encrypted {
                #expect(try Self.markersFound(under: aliceFolder) == [])
                #expect(try Self.markersFound(under: bobFolder) == [])
                // fileURL(for:) gives a decrypted copy outside the store's folder, gone once the client closes.
                let opened = try await bob.files.fileURL(for: serverID)
                #expect(!opened.path.hasPrefix(bobFolder))
                #expect(try Data(contentsOf: opened) == data)
                try await bob.close()
                #expect(!FileManager.default.fileExists(atPath: opened.path))
            } else {
                #expect(try Self.markersFound(under: bobFolder).contains { $0.hasPrefix("store.sqlite-files/cache/") })
                #expect(try await bob.files.fileURL(for: serverID).path.hasPrefix(bobFolder))
            }
        }
    }

    @Test("a download broken off part-way leaves a sealed partial file, and resumes from it to the right bytes")
    func brokenDownloadResumes() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let proxy = try await FaultProxy.start(upstreamPort: fixture.server.port, faultRate: 0, seed: 3)
            try await withCleanup({ await proxy.stop() }) {
                let alice = try await fixture.client("alice")
                let (source, data) = try Self.markerFile(bytes: 3_000_000)
                defer { try? FileManager.default.removeItem(at: source) }
                let localID = try alice.files.upload(from: source, name: "big.txt")
                await alice.files.waitForUploads()
                let serverID = try #require(try alice.files.upload(localID)?.serverID)

                // Each new connection's answers are cut after 1 MB (the first one also carries the sign-in and the metadata):
                // the download breaks twice and resumes twice.
                proxy.script(Array(repeating: .cutResponse(after: 1 << 20), count: 2))
                let bob = try await fixture.client("bob", store: .file(Fixture.temporaryStorePath()), network: nil) {
                    $0.storeKey = Self.key
                    $0.serverURL = proxy.baseURL
                    $0.retry = RetryPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20), maximumAttempts: 6)
                }
                #expect(try await bob.files.data(for: serverID) == data)
                #expect(proxy.connections >= 3)
                #expect(try Self.markersFound(under: try Self.folder(of: bob)) == [])

                // A partial file left by a download that gave up: sealed, no marker, and taken up by the next attempt.
                // A proxy of its own: connections are pooled across clients, and bob's last one is still open.
                let second = try await FaultProxy.start(upstreamPort: fixture.server.port, faultRate: 0, seed: 4)
                try await withCleanup({ await second.stop() }) {
                    // Opening asks for the schema and registers at once, over two connections: both are cut.
                    second.script(Array(repeating: .cutResponse(after: 1 << 20), count: 2))
                    let store = Fixture.temporaryStorePath()
                    let carol = try await fixture.client("rita", store: .file(store), network: nil) {
                        $0.storeKey = Self.key
                        $0.serverURL = second.baseURL
                        $0.retry = RetryPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20), maximumAttempts: 1)
                    }
                    await #expect(throws: CairnError.self) { try await carol.files.data(for: serverID) }
                    let partial = carol.fileFolder.cache.appendingPathComponent(serverID + ".partial")
                    #expect(SealedFile.isSealed(partial))
                    #expect(try KeptFileWriter.resumableLength(of: partial, sealing: carol.fileFolder.readSealing) > 0)
                    #expect(try Self.markersFound(under: try Self.folder(of: carol)) == [])
                    // Opened again with retries: it resumes from the partial file (across a cut connection left in the pool).
                    try await carol.close()
                    let resumed = try await fixture.client("rita", store: .file(store), network: nil) {
                        $0.storeKey = Self.key
                        $0.serverURL = second.baseURL
                        $0.retry = RetryPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20), maximumAttempts: 6)
                    }
                    #expect(try await resumed.files.data(for: serverID) == data)
                }
            }
        }
    }

    @Test("encrypting a store in place seals the files it kept; the queued upload then completes with the right bytes")
    func encryptInPlace() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", store: .file(path), network: network) { $0.storeKey = nil }
            let (source, data) = try Self.markerFile(bytes: 200_000)
            defer { try? FileManager.default.removeItem(at: source) }
            network.isOnline = false
            let localID = try alice.files.upload(from: source, name: "kept.txt")
            try await alice.close()
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            #expect(try !Self.markersFound(under: folder).isEmpty)

            try StoreEncryption.encrypt(storeAt: path, with: Self.key)
            #expect(try Self.markersFound(under: folder) == [])
            let reopened = try await fixture.client("alice", store: .file(path)) { $0.storeKey = Self.key }
            #expect(try await reopened.files.data(for: localID) == data)
            await reopened.files.waitForUploads()
            let serverID = try #require(try reopened.files.upload(localID)?.serverID)
            #expect(try await reopened.files.metadata(serverID).sha256 == TestFiles.sha256(data))
            #expect(try Self.markersFound(under: folder) == [])

            // Signing out removes the files and leaves no key that opens old ones.
            let sealingBefore = try #require(reopened.store.fileSealing)
            try await reopened.signOut()
            #expect(!FileManager.default.fileExists(atPath: path + "-files"))
            #expect(reopened.store.fileSealing != sealingBefore)
        }
    }
}
