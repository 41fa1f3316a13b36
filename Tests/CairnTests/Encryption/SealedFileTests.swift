import CairnProtocol
import CairnTesting
import Foundation
import Testing

@testable import Cairn

/// The sealed file layout on its own: round trips, taking a file up again after a break, and tampering.
@Suite("Encryption: sealed files")
struct SealedFileTests {
    static let sealing = FileSealing.generate()

    static func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("cairn-sealed-\(UUID().uuidString)")
    }

    /// Bytes that differ everywhere, so a misplaced segment cannot read back right by chance.
    static func bytes(_ count: Int, seed: UInt8 = 1) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &+ $0 >> 8) })
    }

    /// Writes `data` sealed, in chunks of uneven sizes.
    static func write(_ data: Data, to url: URL, close: Bool = true) throws {
        let writer = try KeptFileWriter(url, sealing: sealing)
        var start = data.startIndex, step = 1
        while start < data.endIndex {
            let end = min(data.endIndex, start + step)
            try writer.write(data[start..<end])
            start = end
            step = step * 3 + 7
        }
        if close { try writer.close() }
    }

    @Test("sealed files read back whole and in any range, whatever their size", arguments: [0, 1, 65_535, 65_536, 65_537, 200_003])
    func roundTrip(size: Int) throws {
        let url = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: url) }
        let data = Self.bytes(size)
        try Self.write(data, to: url)
        #expect(SealedFile.isSealed(url))
        #expect(try SealedFile.length(of: url) == Int64(size))
        #expect(try KeptFileReader(url, sealing: Self.sealing).readToEnd() == data)
        for (offset, length) in [(0, size), (size / 3, size / 3), (size / 2, size - size / 2), (size, 0)] {
            let reader = try KeptFileReader(url, sealing: Self.sealing, offset: Int64(offset), length: Int64(length))
            #expect(try reader.readToEnd() == data.subdata(in: offset..<(offset + length)))
        }
        #expect(throws: CairnError.self) { try KeptFileReader(url, sealing: Self.sealing, offset: 0, length: Int64(size) + 1) }
        #expect(throws: CairnError.self) { try KeptFileReader(url, sealing: nil) }
    }

    @Test("a sealed file taken up again keeps what it holds: closed, broken off before closing, or torn at the end")
    func takeUp() throws {
        let url = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: url) }
        let data = Self.bytes(300_000, seed: 9)
        let segment = SealedFile.sealedSegmentSize, header = SealedFile.headerSize

        // Closed: the last short segment opens again and takes more.
        try Self.write(data.prefix(150_000), to: url)
        #expect(try KeptFileWriter.resumableLength(of: url, sealing: Self.sealing) == 150_000)
        let more = try KeptFileWriter(url, sealing: Self.sealing)
        #expect(more.startLength == 150_000)
        try more.write(data[150_000...])
        try more.close()
        #expect(try KeptFileReader(url, sealing: Self.sealing).readToEnd() == data)

        // Broken off before closing: the final segment never reached the disk; the whole ones stand.
        let handle = try FileHandle(forUpdating: url)
        try handle.truncate(atOffset: UInt64(header + 3 * segment))
        try handle.close()
        #expect(throws: CairnError.self) { try KeptFileReader(url, sealing: Self.sealing).readToEnd() }
        #expect(try KeptFileWriter.resumableLength(of: url, sealing: Self.sealing) == Int64(3 * SealedFile.segmentSize))

        // Torn: half a segment at the end is dropped.
        let torn = try FileHandle(forUpdating: url)
        try torn.seekToEnd()
        try torn.write(contentsOf: Data(repeating: 0xAB, count: 5_000))
        try torn.close()
        let resumed = try KeptFileWriter(url, sealing: Self.sealing)
        #expect(resumed.startLength == Int64(3 * SealedFile.segmentSize))
        try resumed.write(data[(3 * SealedFile.segmentSize)...])
        try resumed.close()
        #expect(try KeptFileReader(url, sealing: Self.sealing).readToEnd() == data)

        // A wrong key takes nothing up: the file starts over.
        #expect(try KeptFileWriter.resumableLength(of: url, sealing: FileSealing.generate()) == 0)
    }

    @Test("a changed byte, swapped or cut segments, another file's segment or another key are store_corrupted, never wrong bytes", arguments: 0..<8)
    func tampering(seed: Int) throws {
        let url = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: url) }
        let data = Self.bytes(250_000, seed: UInt8(seed))
        try Self.write(data, to: url)
        var sealed = try Data(contentsOf: url)
        let segment = SealedFile.sealedSegmentSize, header = SealedFile.headerSize
        switch seed {
        case 0...3:
            // One flipped byte: in the header's file id, or in a segment's nonce, ciphertext or tag.
            var generator = SeededGenerator(state: UInt64(seed))
            let position = seed == 0 ? 20 : Int.random(in: header..<sealed.count, using: &generator)
            sealed[position] ^= 0x10
        case 4:
            // Segments 0 and 1 swapped.
            let first = sealed.subdata(in: header..<(header + segment)), second = sealed.subdata(in: (header + segment)..<(header + 2 * segment))
            sealed.replaceSubrange(header..<(header + 2 * segment), with: second + first)
        case 5:
            // The last segment cut off: the one before was not sealed as the last.
            sealed = sealed.prefix(header + 3 * segment)
        case 6:
            // Segment 1 of another file sealed with the same key.
            let other = Self.temporaryFile()
            defer { try? FileManager.default.removeItem(at: other) }
            try Self.write(Self.bytes(250_000, seed: 99), to: other)
            let foreign = try Data(contentsOf: other)
            sealed.replaceSubrange((header + segment)..<(header + 2 * segment), with: foreign.subdata(in: (header + segment)..<(header + 2 * segment)))
        default:
            break
        }
        try sealed.write(to: url)
        let key = seed == 7 ? FileSealing.generate() : Self.sealing
        do {
            let read = try KeptFileReader(url, sealing: key).readToEnd()
            Issue.record("read \(read.count) bytes from a changed file (\(read == data ? "the original" : "wrong") bytes)")
        } catch let error as CairnError {
            #expect(error.code == .storeCorrupted)
        }
    }

    @Test("a clear file where a sealed one belongs is refused")
    func clearFileRefused() throws {
        let url = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: url) }
        try Self.bytes(1_000).write(to: url)
        #expect(try KeptFileReader(url, sealing: Self.sealing).readToEnd() == Self.bytes(1_000))
        do {
            _ = try KeptFileReader(url, sealing: Self.sealing, requireSealed: true)
            Issue.record("a clear file was read as sealed")
        } catch let error as CairnError {
            #expect(error.code == .storeCorrupted)
        }
    }
}
