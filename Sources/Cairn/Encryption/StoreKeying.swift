import Foundation
import CCairnStoreCipher
import Crypto

/// What the first bytes of a store file say it is.
enum StoreFileKind: Equatable {
    /// Missing or empty: a new store.
    case absent
    /// An SQLite database in the clear.
    case plaintext
    /// A Cairn encrypted store (``StoreHeader``).
    case encrypted

    /// Reads the first bytes of `path`.
    static func of(_ path: String) throws -> StoreFileKind {
        guard let handle = FileHandle(forReadingAtPath: path) else { return .absent }
        defer { try? handle.close() }
        let head = try handle.read(upToCount: StoreHeader.size) ?? Data()
        if head.isEmpty { return .absent }
        if head.starts(with: StoreHeader.magic) { return .encrypted }
        if head.starts(with: StoreHeader.sqliteMagic) { return .plaintext }
        throw CairnError(.storeCorrupted, "The file at \(path) is neither a Cairn store nor an SQLite database")
    }
}

/// Checks a key against a store file and registers the file with the store cipher before SQLite opens it.
enum StoreKeying {
    /// The registration that keeps `path` (an SQLite path) encrypted under `key`, or nil for a plaintext store.
    ///
    /// - Throws: `wrong_key` when the key does not open the store (nothing is read or written), `key_required` when
    ///   an encrypted store is opened without a key, `store_not_encrypted` when a plaintext store is given a key.
    static func register(path: String, key: StoreKey?) throws -> StoreCipherRegistration? {
        let kind = try StoreFileKind.of(path)
        switch (kind, key) {
        case (.plaintext, nil), (.absent, nil):
            // A registration left by a store that was encrypted under this name earlier in the process must not apply.
            cairn_store_cipher_unregister(path)
            return nil
        case (.encrypted, nil):
            throw CairnError(.keyRequired, "The store at \(path) is encrypted: open it with its key")
        case (.plaintext, .some):
            throw CairnError(
                .storeNotEncrypted, "The store at \(path) is not encrypted: encrypt it first (StoreEncryption.encrypt, cairn store encrypt)")
        case (.absent, .some(let key)):
            removeJournals(of: path)
            let header = StoreHeader.new(for: key)
            return try StoreCipherRegistration(path: path, key: try derive(key, header), header: header)
        case (.encrypted, .some(let key)):
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe).prefix(StoreHeader.size)
            let header = try StoreHeader.parse(bytes)
            let derived = try derive(key, header)
            guard header.isChecked(by: bytes, key: derived) else {
                throw CairnError(.wrongKey, "The key does not open the store at \(path); nothing was read or changed")
            }
            return try StoreCipherRegistration(path: path, key: derived, header: header)
        }
    }

    private static func derive(_ key: StoreKey, _ header: StoreHeader) throws -> SymmetricKey {
        // A passphrase for a store made with a raw key (or the reverse) cannot be its key.
        guard key.isPassphrase == (header.derivation == 1) else {
            throw CairnError(.wrongKey, "The key does not open this store: it was created with a \(header.derivation == 1 ? "passphrase" : "raw key")")
        }
        return try key.derive(salt: header.salt, rounds: Int(header.rounds))
    }

    /// Removes the WAL, its index and the journal beside `path`: a new or rewritten store must not pick up those of
    /// an earlier file of the same name.
    static func removeJournals(of path: String) {
        for file in StoreFiles.sideCars(of: path) { try? FileManager.default.removeItem(atPath: file) }
    }

    /// Removes what an interrupted rewrite left beside `path`.
    static func removeLeftovers(of path: String) throws {
        for leftover in StoreFiles.rewriteLeftovers(of: path) where FileManager.default.fileExists(atPath: leftover) {
            try FileManager.default.removeItem(atPath: leftover)
        }
    }

    /// Waits until the file or folder at `path` is on disk.
    static func flush(_ path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw CairnError(.storeFailed, "\(path) could not be opened to flush it (errno \(errno))") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw CairnError(.storeFailed, "\(path) could not be flushed (errno \(errno))") }
    }
}
