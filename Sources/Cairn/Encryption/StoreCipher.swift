import CCairnStoreCipher
import Crypto
import Foundation
import Synchronization

/// The Swift half of Cairn's page cipher: AES-256-GCM over each block the VFS (CCairnStoreCipher) hands over, and
/// the registrations that tell the VFS which database files to encrypt with which key.
///
/// Every block is sealed with a fresh random 96-bit nonce; its additional data binds the file's id (the header's
/// salt), the file's kind (database, WAL, journal) and the block's index, so blocks cannot be moved between files
/// or positions unnoticed.
enum StoreCipher {
    /// One store's key, handed to the VFS as an opaque pointer and retained by every file that uses it.
    final class Context: Sendable {
        let key: SymmetricKey
        /// The nonce's fields: 64 random bits drawn when the context is made (and again every 2^32 blocks), then a
        /// 32-bit count of the blocks sealed (NIST SP 800-38D's deterministic construction, section 8.2.1). A random
        /// draw per block would cost a system call on every page written.
        private let nonceFields = Mutex<(fixed: UInt64, count: UInt32)>((UInt64.random(in: .min ... .max), 0))

        init(key: SymmetricKey) { self.key = key }

        /// A nonce never given before under this context.
        func nextNonce() throws -> AES.GCM.Nonce {
            let (fixed, count) = nonceFields.withLock { fields -> (UInt64, UInt32) in
                if fields.count == .max { fields = (UInt64.random(in: .min ... .max), 0) }
                fields.count += 1
                return (fields.fixed, fields.count)
            }
            return try withUnsafeBytes(of: (fixed.bigEndian, count.bigEndian)) { bytes in
                try AES.GCM.Nonce(data: UnsafeRawBufferPointer(rebasing: bytes[0..<12]))
            }
        }
    }

    /// Installs the VFS once per process, in front of SQLite's default VFS (files not registered pass through).
    static func install() throws {
        guard installation == SQLITE_OK_CODE else {
            throw CairnError(.storeFailed, "The store cipher could not be installed in SQLite (code \(installation))")
        }
    }

    private static let SQLITE_OK_CODE: Int32 = 0

    private static let installation: Int32 = cairn_store_cipher_install(
        { context, aad, plaintext, length, output in
            guard let context, let aad, let output else { return 1 }
            let cipher = Unmanaged<Context>.fromOpaque(context).takeUnretainedValue()
            do {
                let box = try AES.GCM.seal(
                    UnsafeRawBufferPointer(start: plaintext, count: Int(length)), using: cipher.key, nonce: try cipher.nextNonce(),
                    authenticating: UnsafeRawBufferPointer(start: aad, count: Int(CAIRN_STORE_AAD_SIZE)))
                // The block's layout is the box's: nonce | ciphertext | tag.
                guard let combined = box.combined, combined.count == Int(length) + 28 else { return 1 }
                combined.copyBytes(to: output, count: combined.count)
                return 0
            } catch {
                return 1
            }
        },
        { context, aad, input, length, plaintext in
            guard let context, let aad, let input, let plaintext else { return 1 }
            let cipher = Unmanaged<Context>.fromOpaque(context).takeUnretainedValue()
            let count = Int(length)
            do {
                let box = try AES.GCM.SealedBox(combined: UnsafeRawBufferPointer(start: input, count: count + 28))
                let opened = try AES.GCM.open(
                    box, using: cipher.key, authenticating: UnsafeRawBufferPointer(start: aad, count: Int(CAIRN_STORE_AAD_SIZE)))
                opened.copyBytes(to: plaintext, count: count)
                return 0
            } catch {
                return 1
            }
        },
        { context in if let context { _ = Unmanaged<Context>.fromOpaque(context).retain() } },
        { context in if let context { Unmanaged<Context>.fromOpaque(context).release() } }
    )

    /// The path SQLite uses for `path` (absolute, links resolved): registrations must name it exactly.
    static func sqlitePath(_ path: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard cairn_store_cipher_full_pathname(path, &buffer, Int32(buffer.count)) == SQLITE_OK_CODE else {
            throw CairnError(.storeFailed, "The store's path could not be resolved")
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// How many blocks failed authentication in this process.
    static var failures: Int64 { cairn_store_cipher_failures() }
}

/// Keeps a database path encrypted under one key while it lives; several opens of one path share it.
final class StoreCipherRegistration: Sendable {
    let path: String
    /// The store's page size (the header's): SQLite must use it, so that each page is one block.
    let pageSize: Int

    private static let counts = Mutex<[String: Int]>([:])

    /// Registers `path` (a path from ``StoreCipher/sqlitePath(_:)``) with `key` and `header`.
    init(path: String, key: SymmetricKey, header: StoreHeader) throws {
        try StoreCipher.install()
        self.path = path
        self.pageSize = Int(header.pageSize)
        let context = Unmanaged.passRetained(StoreCipher.Context(key: key))
        defer { context.release() }
        let bytes = header.encoded(checking: key)
        let code = Self.counts.withLock { counts -> Int32 in
            let code = bytes.withUnsafeBytes { raw in
                header.salt.withUnsafeBytes { salt in
                    cairn_store_cipher_register(
                        path, context.toOpaque(), salt.bindMemory(to: UInt8.self).baseAddress,
                        raw.bindMemory(to: UInt8.self).baseAddress, Int32(header.pageSize))
                }
            }
            if code == 0 { counts[path, default: 0] += 1 }
            return code
        }
        guard code == 0 else { throw CairnError(.storeFailed, "The store cipher could not register the store (code \(code))") }
    }

    deinit {
        Self.counts.withLock { counts in
            let left = (counts[path] ?? 1) - 1
            counts[path] = left > 0 ? left : nil
            if left <= 0 { cairn_store_cipher_unregister(path) }
        }
    }
}
