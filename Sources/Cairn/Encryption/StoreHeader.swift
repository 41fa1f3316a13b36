import CCairnStoreCipher
import Crypto
import Foundation

/// The clear header at the start of an encrypted store file (128 bytes): what is needed to derive and check the key.
///
/// | bytes | content |
/// |-------|---------|
/// | 0–15  | `CairnEncrypted1\0` |
/// | 16    | format version (1) |
/// | 17    | cipher (1: AES-256-GCM) |
/// | 18    | key derivation (0: raw key, 1: PBKDF2-SHA256) |
/// | 20–23 | PBKDF2 rounds, big-endian |
/// | 24–27 | page size, big-endian |
/// | 28–43 | random salt, also the file's id bound into every block |
/// | 44–75 | key check: HMAC-SHA256 of bytes 0–43 under the key |
///
/// The key check refuses a wrong key before SQLite reads a page.
struct StoreHeader: Equatable {
    static let size = Int(CAIRN_STORE_HEADER_SIZE)
    static let magic = Data("CairnEncrypted1\0".utf8)
    /// The first 16 bytes of every plaintext SQLite database.
    static let sqliteMagic = Data("SQLite format 3\0".utf8)
    /// The page size of new encrypted stores: 8 KB, half as many blocks to seal and open as SQLite's 4 KB default.
    static let pageSize = 8192

    var derivation: UInt8
    var rounds: UInt32
    var pageSize: UInt32
    var salt: Data

    /// A header for a new store under `key`, with a fresh salt.
    static func new(for key: StoreKey) -> StoreHeader {
        StoreHeader(
            derivation: key.isPassphrase ? 1 : 0, rounds: key.isPassphrase ? UInt32(StoreKey.passphraseRounds) : 0,
            pageSize: UInt32(pageSize), salt: Data(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }))
    }

    /// The header's first 44 bytes, which the key check covers.
    private var fields: Data {
        var data = Self.magic
        data.append(contentsOf: [1, 1, derivation, 0])
        data.append(contentsOf: withUnsafeBytes(of: rounds.bigEndian) { Array($0) })
        data.append(contentsOf: withUnsafeBytes(of: pageSize.bigEndian) { Array($0) })
        data.append(salt)
        return data
    }

    /// The whole 128-byte header with its key check under `key`.
    func encoded(checking key: SymmetricKey) -> Data {
        var data = fields
        data.append(Data(HMAC<SHA256>.authenticationCode(for: fields, using: key)))
        data.append(Data(count: Self.size - data.count))
        return data
    }

    /// True when `bytes` (the file's header, which parsed as this one) carry the key check of `key`.
    func isChecked(by bytes: Data, key: SymmetricKey) -> Bool {
        encoded(checking: key) == bytes.prefix(Self.size)
    }

    /// Reads a header, or throws `store_corrupted` when the bytes are not one Cairn wrote.
    static func parse(_ bytes: Data) throws -> StoreHeader {
        let bytes = Data(bytes)
        guard bytes.count >= size, bytes.prefix(16) == magic, bytes[16] == 1, bytes[17] == 1, bytes[18] <= 1 else {
            throw CairnError(.storeCorrupted, "The store's encryption header is not one this version of Cairn reads")
        }
        func integer(at offset: Int) -> UInt32 { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        let header = StoreHeader(
            derivation: bytes[18], rounds: integer(at: 20), pageSize: integer(at: 24), salt: bytes[28..<44])
        guard header.pageSize >= 512, header.pageSize <= 65536, header.pageSize & (header.pageSize - 1) == 0,
            header.derivation == 0 || (1...100_000_000).contains(header.rounds)
        else { throw CairnError(.storeCorrupted, "The store's encryption header holds impossible settings") }
        return header
    }
}
