import Crypto
import Foundation

/// The key that seals the files of an encrypted store (queued uploads and cached downloads): 256 random bits kept in
/// the store's own encrypted `cairn_meta`, so that changing the store's key never rewrites its files.
struct FileSealing: Sendable, Hashable {
    let key: SymmetricKey

    /// A new random key.
    static func generate() -> FileSealing { FileSealing(key: SymmetricKey(size: .bits256)) }

    /// The key from its stored hex form.
    init?(hex: String) {
        guard let bytes = Hex.decode(hex), bytes.count == 32 else { return nil }
        key = SymmetricKey(data: Data(bytes))
    }

    init(key: SymmetricKey) { self.key = key }

    /// The stored hex form.
    var hex: String { key.withUnsafeBytes { Hex.encode(Data($0)) } }

    static func == (lhs: FileSealing, rhs: FileSealing) -> Bool { lhs.hex == rhs.hex }

    func hash(into hasher: inout Hasher) {}
}

/// The layout of a sealed file: a clear 32-byte header (`CAIRNSF1`, the segment size, a random file id), then the
/// bytes in segments of ``segmentSize`` sealed one by one with AES-GCM as `nonce(12) | ciphertext | tag(16)`.
///
/// Each segment authenticates the file id, its own index and whether it is the last one, so segments cannot be
/// swapped, moved between files, or cut off at the end unnoticed. A file streams through in one segment of memory,
/// whatever its size, and any byte range can be read without reading what comes before it.
enum SealedFile {
    static let magic = Data("CAIRNSF1".utf8)
    static let headerSize = 32
    static let segmentSize = 64 * 1024
    static let overhead = 28
    static let sealedSegmentSize = segmentSize + overhead

    /// True when the file at `url` begins like a sealed file.
    static func isSealed(_ url: URL) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: magic.count)) == magic
    }

    /// The plaintext length of a sealed file of `size` bytes on disk (the last segment may be short).
    static func plaintextLength(sealedSize size: Int64) throws -> Int64 {
        let body = size - Int64(headerSize)
        let whole = body / Int64(sealedSegmentSize), rest = body % Int64(sealedSegmentSize)
        guard body >= Int64(overhead), rest == 0 || rest >= Int64(overhead) else { throw corrupted("its length does not match its segments") }
        return whole * Int64(segmentSize) + (rest == 0 ? 0 : rest - Int64(overhead))
    }

    /// The bytes an app would read from `url`: its plaintext length, whether it is sealed or in the clear.
    static func length(of url: URL) throws -> Int64 {
        let size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value ?? 0
        return isSealed(url) ? try plaintextLength(sealedSize: size) : size
    }

    static func header(fileID: Data) -> Data {
        var header = magic
        withUnsafeBytes(of: UInt32(segmentSize).bigEndian) { header.append(contentsOf: $0) }
        header.append(fileID)
        return header
    }

    /// The file id of a header, checking its magic and segment size.
    static func fileID(fromHeader header: Data) throws -> Data {
        guard header.count == headerSize, header.starts(with: magic) else { throw corrupted("its header is not a Cairn sealed file's") }
        let size = header.dropFirst(8).prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard size == UInt32(segmentSize) else { throw corrupted("its segment size \(size) is not \(segmentSize)") }
        return Data(header.suffix(headerSize - 12))
    }

    static func authenticatedData(fileID: Data, index: Int64, isLast: Bool) -> Data {
        var data = fileID
        withUnsafeBytes(of: UInt64(index).bigEndian) { data.append(contentsOf: $0) }
        data.append(isLast ? 1 : 0)
        return data
    }

    static func seal(_ plaintext: some DataProtocol, fileID: Data, index: Int64, isLast: Bool, with sealing: FileSealing) throws -> Data {
        try AES.GCM.seal(plaintext, using: sealing.key, authenticating: authenticatedData(fileID: fileID, index: index, isLast: isLast))
            .combined!
    }

    /// The plaintext of one sealed segment, or nil when it does not authenticate as segment `index` (tampered, torn,
    /// or sealed with another key or position).
    static func open(_ segment: Data, fileID: Data, index: Int64, isLast: Bool, with sealing: FileSealing) -> Data? {
        guard segment.count >= overhead, let box = try? AES.GCM.SealedBox(combined: segment) else { return nil }
        return try? AES.GCM.open(box, using: sealing.key, authenticating: authenticatedData(fileID: fileID, index: index, isLast: isLast))
    }

    static func corrupted(_ reason: String) -> CairnError {
        CairnError(.storeCorrupted, "A file of the store could not be decrypted: \(reason). It was changed outside Cairn or damaged")
    }
}
