import CairnProtocol
import CairnTesting
import Foundation
import GRDB
import Testing

@testable import Cairn

/// A changed byte in an encrypted store's pages is `store_corrupted` wherever the SDK meets it: when the store
/// opens, in the app's SQL, and in a sync.
@Suite("Encryption: a tampered store is store_corrupted on every surface")
struct TamperedStoreTests {
    static let key = try! StoreKey.raw(Data(repeating: 9, count: 32))
    /// Bytes of the clear header before the first page, and of each page's nonce and tag (see CairnStoreCipher.h).
    static let (headerBytes, overhead, pageSize) = (128, 28, 8192)

    /// Alice's encrypted store file holding `n1`, synced, then closed; the number of the page that holds `table`'s rows.
    static func syncedStore(_ fixture: Fixture, table: (CairnClient) throws -> String) async throws -> (path: String, page: Int) {
        let path = Fixture.temporaryStorePath()
        let alice = try await fixture.client("alice", store: .file(path)) { $0.storeKey = Self.key }
        try alice.save("notes", id: "n1", data: ["title": "before"])
        try await alice.sync()
        let name = try table(alice)
        let rows = try alice.rows("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [.string(name)])
        let page = try #require(rows.first?["rootpage"]?.integerValue)
        try await alice.close()
        // Every page into the main file, none left in the WAL.
        let store = try LocalStore.open(.file(path), configuration: StoreConfiguration(key: Self.key))
        try await store.writer.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        try store.close()
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0)
        return (path, Int(page))
    }

    /// Flips one byte inside the ciphertext of page `page` (1 is the first).
    static func flipByte(ofPage page: Int, in path: String) throws {
        let url = URL(fileURLWithPath: path)
        var bytes = try Data(contentsOf: url)
        let offset = headerBytes + (page - 1) * (pageSize + overhead) + 12 + 100
        bytes[offset] ^= 0x5a
        try bytes.write(to: url)
    }

    static func reopen(_ fixture: Fixture, _ path: String) async throws -> CairnClient {
        try await fixture.client("alice", store: .file(path)) { $0.storeKey = Self.key }
    }

    @Test("opening a store whose first page was changed throws store_corrupted")
    func open() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let (path, _) = try await Self.syncedStore(fixture) { _ in "cairn_meta" }
            try Self.flipByte(ofPage: 1, in: path)
            let error = await #expect(throws: CairnError.self) { _ = try await Self.reopen(fixture, path) }
            #expect(error?.code == .storeCorrupted, "\(String(describing: error))")
        }
    }

    @Test("the app's SQL over a changed page throws store_corrupted, and queryJSON answers it")
    func query() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let (path, page) = try await Self.syncedStore(fixture) { try $0.tableName(for: "notes") }
            try Self.flipByte(ofPage: page, in: path)
            let alice = try await Self.reopen(fixture, path)
            let table = try alice.tableName(for: "notes")
            let error = #expect(throws: CairnError.self) { _ = try alice.rows("SELECT * FROM \(table)") }
            #expect(error?.code == .storeCorrupted, "\(String(describing: error))")
            #expect(alice.queryJSON("SELECT * FROM \(table)").contains(#""code":"store_corrupted""#))
            // What the SQL itself gets wrong stays validation_failed.
            #expect(throws: CairnError.self) { _ = try alice.rows("SELECT * FROM no_such_table") }
            #expect((try? alice.rows("SELEKT 1")) == nil)
            #expect(alice.queryJSON("SELEKT 1").contains(#""code":"validation_failed""#))
        }
    }

    @Test("a sync that meets a changed page throws store_corrupted, and the history says so")
    func sync() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let (path, page) = try await Self.syncedStore(fixture) { try $0.tableName(for: "notes") }
            let bob = try await fixture.client("bob")
            try await bob.sync()
            try bob.save("notes", id: "n1", data: ["title": "changed by bob"])
            try await bob.sync()
            try Self.flipByte(ofPage: page, in: path)
            let alice = try await Self.reopen(fixture, path)
            let error = await #expect(throws: CairnError.self) { try await alice.sync() }
            #expect(error?.code == .storeCorrupted, "\(String(describing: error))")
            #expect(await alice.status().lastError?.code == .storeCorrupted)
        }
    }
}
