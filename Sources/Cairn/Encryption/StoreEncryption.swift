import CairnSQL
import Foundation
import GRDB

/// Encrypts, decrypts and re-keys store files that are not open, and tells whether a file is encrypted.
///
/// Each change writes a complete copy of the store under the new key beside it, flushes it, and renames it over the
/// old file in one atomic step: a process killed at any moment leaves a store that opens with the old key or the
/// new one, with nothing lost. Close every client of the store first.
///
/// ```swift
/// try StoreEncryption.encrypt(storeAt: path, with: .passphrase(passphrase))
/// try StoreEncryption.rekey(storeAt: path, from: .passphrase(passphrase), to: .generate())
/// ```
public enum StoreEncryption {
    /// True when the file at `path` is an encrypted Cairn store, false when it is a plaintext store or absent.
    public static func isEncrypted(storeAt path: String) throws -> Bool {
        try StoreFileKind.of(path) == .encrypted
    }

    /// Re-encrypts an encrypted store under `newKey`.
    ///
    /// - Throws: `wrong_key` when `key` does not open it, `key_required`/`store_not_encrypted` when it is not encrypted.
    public static func rekey(storeAt path: String, from key: StoreKey, to newKey: StoreKey) throws {
        guard try StoreFileKind.of(path) == .encrypted else {
            throw CairnError(.storeNotEncrypted, "The store at \(path) is not encrypted: use encrypt(storeAt:with:)")
        }
        try rewrite(storeAt: path, from: key, to: newKey)
    }

    /// Encrypts a plaintext store in place under `key`, then seals the files it keeps (queued uploads, cached
    /// downloads), each replaced in one rename. Files not sealed yet when a process is killed are sealed when the
    /// store next opens.
    public static func encrypt(storeAt path: String, with key: StoreKey) throws {
        guard try StoreFileKind.of(path) == .plaintext else {
            throw CairnError(.invalidArgument, "The store at \(path) is already encrypted (or missing): use rekey to change its key")
        }
        try rewrite(storeAt: path, from: nil, to: key)
        do {
            let store = try LocalStore.open(.file(path), configuration: StoreConfiguration(key: key))
            defer { try? store.close() }
            try FileFolder(store: .file(path), keys: store).sealLeftovers()
        } catch {
            throw CairnError.store(error)
        }
    }

    /// Decrypts an encrypted store in place: afterwards it opens without a key.
    public static func decrypt(storeAt path: String, with key: StoreKey) throws {
        guard try StoreFileKind.of(path) == .encrypted else {
            throw CairnError(.storeNotEncrypted, "The store at \(path) is not encrypted")
        }
        try rewrite(storeAt: path, from: key, to: nil)
    }

    /// Copies the store under `newKey` (nil: plaintext) beside it, then renames the copy over it.
    static func rewrite(storeAt path: String, from key: StoreKey?, to newKey: StoreKey?) throws {
        let path = try StoreCipher.sqlitePath(path)
        try OpenStoreFiles.ensureClosed(path)
        let source = try StoreKeying.register(path: path, key: key)
        let copy = StoreFiles.rewriteCopy(of: path)
        try StoreKeying.removeLeftovers(of: path)
        let target = try newKey.flatMap { try StoreKeying.register(path: copy, key: $0) }
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            SQLiteFunctions.register(db)
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            // Keeps every other connection out until the copy has replaced the store.
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
        }
        do {
            let database = try DatabaseQueue(path: path, configuration: configuration)
            try database.writeWithoutTransaction { db in
                // Everything in the WAL goes into the database file first, so that the file alone is the store.
                let checkpoint = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                if let checkpoint, (checkpoint[0] as Int?) == 1 {
                    throw CairnError(.storeFailed, "The store is in use by another process; close it and try again")
                }
                // The copy is written with the page size its header records (VACUUM INTO takes it from here).
                if let target { try db.execute(sql: "PRAGMA page_size = \(target.pageSize)") }
                try db.execute(sql: "VACUUM INTO ?", arguments: [copy])
            }
            try database.close()
            try StoreKeying.flush(copy)
            guard rename(copy, path) == 0 else {
                throw CairnError(.storeFailed, "The re-encrypted store could not replace the old one (errno \(errno))")
            }
            try StoreKeying.flush(URL(fileURLWithPath: path).deletingLastPathComponent().path)
            StoreKeying.removeJournals(of: path)
        } catch {
            try? StoreKeying.removeLeftovers(of: path)
            throw CairnError.store(error)
        }
        withExtendedLifetime((source, target)) {}
    }
}
