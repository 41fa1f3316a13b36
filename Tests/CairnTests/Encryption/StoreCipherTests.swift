import CairnProtocol
import CairnTesting
import Foundation
import GRDB
import Testing

@testable import Cairn

/// Stores encrypted by the page cipher: nothing readable on disk, wrong keys refused, changed bytes detected.
@Suite("Encryption: the store cipher")
struct StoreCipherTests {
    static let marker = "CAIRN-MARKER-7f3a9c"
    static let key = try! StoreKey.raw(Data(repeating: 7, count: 32))

    /// A fresh folder and a store path inside it.
    static func path() -> (folder: String, store: String) {
        let path = Fixture.temporaryStorePath()
        return (URL(fileURLWithPath: path).deletingLastPathComponent().path, path)
    }

    /// Opens a store at `path` with `key`, learning the test schema.
    static func open(_ path: String, key: StoreKey?) throws -> LocalStore {
        let store = try LocalStore.open(.file(path), configuration: StoreConfiguration(key: key))
        if store.schema == nil { try store.apply(schema: TestStore.schema, etag: nil) }
        return store
    }

    /// Writes `count` records and queued operations that hold the marker, and a full-text index over them.
    static func fill(_ store: LocalStore, count: Int = 300) throws {
        try store.indexes.addIndex(.init(collection: "notes", kind: .index, fields: ["title"]))
        try store.indexes.addIndex(.init(collection: "notes", kind: .fullText, fields: ["title"]))
        for index in 0..<count {
            try store.write(collection: "notes", id: "n-\(index)", change: .create(["title": .string("\(marker) note \(index)"), "count": .integer(Int64(index))]))
        }
    }

    /// The page size SQLite uses for `store`.
    static func pageSize(_ store: LocalStore) throws -> Int {
        try store.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0 }
    }

    /// Every form of the marker a careless store could leave on disk.
    static var markerForms: [(String, Data)] {
        let text = marker
        return [
            ("utf8", Data(text.utf8)), ("utf16le", text.data(using: .utf16LittleEndian)!), ("utf16be", text.data(using: .utf16BigEndian)!),
            ("base64", Data(Data(text.utf8).base64EncodedString().dropLast(4).utf8)),
            ("hex", Data(Data(text.utf8).map { String(format: "%02x", $0) }.joined().utf8)),
            ("HEX", Data(Data(text.utf8).map { String(format: "%02X", $0) }.joined().utf8)),
        ]
    }

    /// The files of `folder` where some form of the marker appears, as `file: form`.
    static func markersFound(in folder: String) throws -> [String] {
        var found: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            let data = try Data(contentsOf: URL(fileURLWithPath: folder).appendingPathComponent(name))
            for (form, bytes) in markerForms where data.range(of: bytes) != nil { found.append("\(name): \(form)") }
        }
        return found
    }

    @Test("a plaintext store shows the marker (the search works), an encrypted one shows none, open or closed")
    func markers() throws {
        let plain = Self.path()
        let encrypted = Self.path()
        defer { for folder in [plain.folder, encrypted.folder] { try? FileManager.default.removeItem(atPath: folder) } }
        do {
            let store = try Self.open(plain.store, key: nil)
            try Self.fill(store)
            #expect(try !Self.markersFound(in: plain.folder).isEmpty)
        }
        do {
            let store = try Self.open(encrypted.store, key: Self.key)
            try Self.fill(store)
            #expect(try Self.pageSize(store) == StoreHeader.pageSize)
            // Open: the WAL holds the latest pages.
            #expect(FileManager.default.fileExists(atPath: encrypted.store + "-wal"))
            #expect(try Self.markersFound(in: encrypted.folder) == [])
            #expect(try store.count(Query("notes").matching("note")) == 300)
        }
        #expect(try Self.markersFound(in: encrypted.folder) == [])
        let reopened = try Self.open(encrypted.store, key: Self.key)
        #expect(try reopened.record("notes", id: "n-299")?.data["title"] == .string("\(Self.marker) note 299"))
        #expect(try reopened.uploads.pendingOperations().count == 300)
        #expect(try StoreEncryption.isEncrypted(storeAt: encrypted.store))
        #expect(try !StoreEncryption.isEncrypted(storeAt: plain.store))
    }

    @Test("a wrong key, a missing key and a key for a plaintext store are refused with typed errors; the right key still reads")
    func keys() throws {
        let (folder, path) = Self.path()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.fill(try Self.open(path, key: Self.key), count: 10)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        expectError(.wrongKey) { _ = try Self.open(path, key: try StoreKey.raw(Data(repeating: 8, count: 32))) }
        expectError(.wrongKey) { _ = try Self.open(path, key: .passphrase("guess")) }
        expectError(.keyRequired) { _ = try Self.open(path, key: nil) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try Self.open(path, key: Self.key).record("notes", id: "n-9") != nil)

        let plain = Self.path()
        defer { try? FileManager.default.removeItem(atPath: plain.folder) }
        _ = try Self.open(plain.store, key: nil)
        expectError(.storeNotEncrypted) { _ = try Self.open(plain.store, key: Self.key) }
        expectError(.invalidArgument) { _ = try StoreKey.raw(Data(count: 16)) }
        #expect("\(Self.key)" == "StoreKey(raw: <redacted>)")
    }

    @Test("a passphrase opens what it created, with PBKDF2's rounds kept in the header")
    func passphrase() throws {
        let (folder, path) = Self.path()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.fill(try Self.open(path, key: .passphrase("correct horse")), count: 3)
        let header = try StoreHeader.parse(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(StoreHeader.size))
        #expect(header.rounds == 600_000 && header.derivation == 1)
        #expect(try Self.open(path, key: .passphrase("correct horse")).uploads.pendingOperations().count == 3)
        expectError(.wrongKey) { _ = try Self.open(path, key: .passphrase("correct horse ")) }
    }

    @Test("one flipped byte anywhere in the pages is reported as store_corrupted, never read as data", arguments: 0..<12)
    func tampering(seed: Int) throws {
        let (folder, path) = Self.path()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.fill(try Self.open(path, key: Self.key), count: 200)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        var generator = SplitMix(seed: UInt64(seed) + 1)
        let offset = Int.random(in: StoreHeader.size..<bytes.count, using: &generator)
        bytes[offset] ^= UInt8.random(in: 1...255, using: &generator)
        try bytes.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: CairnError.self) {
          do {
            let store = try Self.open(path, key: Self.key)
            try store.writer.read { db in
                _ = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
                    _ = try Row.fetchAll(db, sql: "SELECT * FROM \(CollectionTable.quote(table))")
                }
            }
          } catch { throw CairnError.store(error) }
        }
        #expect(error?.code == .storeCorrupted, "byte \(offset) of \(bytes.count): \(String(describing: error))")
    }

    @Test("encrypt, rekey and decrypt rewrite the store in place and keep every record and queued change")
    func rekeying() throws {
        let (folder, path) = Self.path()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.fill(try Self.open(path, key: nil), count: 50)
        #expect(try Self.pageSize(try Self.open(path, key: nil)) == 4096)
        try StoreEncryption.encrypt(storeAt: path, with: Self.key)
        #expect(try Self.markersFound(in: folder) == [])
        expectError(.keyRequired) { _ = try Self.open(path, key: nil) }
        do {
            let encrypted = try Self.open(path, key: Self.key)
            #expect(try encrypted.uploads.pendingOperations().count == 50)
            // One page per block: the copy took the page size its header records.
            #expect(try Self.pageSize(encrypted) == StoreHeader.pageSize)
        }

        let newKey = StoreKey.generate()
        expectError(.wrongKey) { try StoreEncryption.rekey(storeAt: path, from: newKey, to: Self.key) }
        try StoreEncryption.rekey(storeAt: path, from: Self.key, to: newKey)
        expectError(.wrongKey) { _ = try Self.open(path, key: Self.key) }
        #expect(try Self.open(path, key: newKey).uploads.pendingOperations().count == 50)
        #expect(try Self.markersFound(in: folder) == [])

        try StoreEncryption.decrypt(storeAt: path, with: newKey)
        let plain = try Self.open(path, key: nil)
        #expect(try plain.uploads.pendingOperations().count == 50)
        #expect(try plain.record("notes", id: "n-49")?.data["count"] == .integer(49))
    }
}

@Suite("Encryption: the client suite's encrypted run")
struct EncryptedSuiteRunTests {
    @Test("with CAIRN_TEST_ENCRYPTED_STORES=1 every fixture client's store is an encrypted file")
    func fixtureStoresAreEncrypted() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let client = try await fixture.client("alice")
            guard Fixture.encryptedStoreKey != nil else { return }
            guard case .file(let path) = client.configuration.store else {
                Issue.record("an encrypted run keeps a store in memory")
                return
            }
            #expect(try StoreEncryption.isEncrypted(storeAt: path))
            #expect(client.configuration.storeKey != nil)
        }
    }
}
