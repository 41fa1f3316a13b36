import CairnProtocol
import Crypto
import Foundation

/// Files for tests: made on disk without holding them in memory, with their SHA-256, and the process's memory peak.
public enum TestFiles {
    /// Lowercase hex SHA-256 of `data`.
    public static func sha256(_ data: Data) -> String { Hex.encode(SHA256.hash(data: data)) }

    /// Lowercase hex SHA-256 of a file, read 1 MB at a time.
    public static func sha256(of url: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        return Hex.encode(hasher.finalize())
    }

    /// A new temporary file of `count` bytes that differ from offset to offset (`seed` makes another content).
    public static func make(_ count: Int, seed: UInt8 = 3) throws -> URL {
        let url = TestScratch.url("cairn-file", suffix: ".bin")
        try bytes(count, seed: seed).write(to: url)
        return url
    }

    /// The bytes ``make(_:seed:)`` writes.
    public static func bytes(_ count: Int, seed: UInt8 = 3) -> Data {
        Data((0..<count).map { index in UInt8(truncatingIfNeeded: index &* 131 &+ Int(seed) &+ index >> 12) })
    }

    /// A new temporary file of `megabytes` MB written 1 MB at a time (never whole in memory), and its SHA-256.
    public static func large(megabytes: Int) throws -> (url: URL, sha256: String) {
        let url = TestScratch.url("cairn-large", suffix: ".bin")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var hasher = SHA256()
        var chunk = Data(count: 1 << 20)
        for megabyte in 0..<megabytes {
            chunk.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
                for index in stride(from: 0, to: raw.count, by: 8) {
                    raw.storeBytes(of: UInt64(megabyte << 20 + index) &* 0x9E37_79B9_7F4A_7C15, toByteOffset: index, as: UInt64.self)
                }
            }
            hasher.update(data: chunk)
            try handle.write(contentsOf: chunk)
        }
        return (url, Hex.encode(hasher.finalize()))
    }

    /// The process's peak resident memory so far (`VmHWM`), in bytes; `nil` where `/proc` is missing.
    public static func peakResidentBytes() -> Int64? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return line.split(separator: " ").compactMap { Int64($0) }.first.map { $0 * 1024 }
    }
}
