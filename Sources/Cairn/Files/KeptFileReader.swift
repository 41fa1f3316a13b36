import Foundation

/// Reads the bytes of a file the store keeps (a queued upload's copy, a cached download), in the clear or sealed
/// (``SealedFile``). A sealed file is decrypted one segment at a time: a range of a 200 MB file streams through in
/// one segment of memory.
///
/// ```swift
/// let reader = try KeptFileReader(url, sealing: store.fileSealing, offset: 1_000)
/// while let chunk = try reader.next(upTo: 256 * 1024) { send(chunk) }
/// ```
final class KeptFileReader {
    private struct Sealed {
        let sealing: FileSealing
        let fileID: Data
        let lastIndex: Int64
    }

    private let url: URL
    private let handle: FileHandle
    private let sealed: Sealed?
    private var position: Int64
    private let end: Int64
    private var segment: (index: Int64, bytes: Data)?

    /// Opens `url` to read `length` bytes from `offset` (nil: to the end). With `requireSealed` (an encrypted
    /// store, where every kept file is sealed) a file in the clear is refused as changed outside Cairn.
    ///
    /// - Throws: `key_required` for a sealed file without a key, `store_corrupted` for a sealed file whose layout is
    ///   broken or a clear one where a sealed one belongs, `invalid_argument` when the file is shorter than the range.
    init(_ url: URL, sealing: FileSealing?, offset: Int64 = 0, length: Int64? = nil, requireSealed: Bool = false) throws {
        self.url = url
        handle = try FileHandle(forReadingFrom: url)
        let header = try handle.read(upToCount: SealedFile.headerSize) ?? Data()
        let size = Int64(try handle.seekToEnd())
        let available: Int64
        if header.starts(with: SealedFile.magic) {
            guard let sealing else {
                throw CairnError(.keyRequired, "\(url.lastPathComponent) is encrypted: open its store with the store's key")
            }
            available = try SealedFile.plaintextLength(sealedSize: size)
            let body = size - Int64(SealedFile.headerSize), segment = Int64(SealedFile.sealedSegmentSize)
            sealed = Sealed(sealing: sealing, fileID: try SealedFile.fileID(fromHeader: header), lastIndex: (body + segment - 1) / segment - 1)
        } else {
            guard !requireSealed else { throw SealedFile.corrupted("\(url.lastPathComponent) is not sealed") }
            sealed = nil
            available = size
        }
        end = length.map { offset + $0 } ?? available
        guard offset >= 0, offset <= end, end <= available else {
            throw CairnError(.invalidArgument, "\(url.lastPathComponent) ended before the bytes to send")
        }
        position = offset
        if sealed == nil { try handle.seek(toOffset: UInt64(offset)) }
    }

    deinit { try? handle.close() }

    /// The next bytes of the range, at most `count`, or nil at its end.
    func next(upTo count: Int) throws -> Data? {
        guard position < end else { return nil }
        let want = Int(min(Int64(count), end - position))
        guard let sealed else {
            guard let data = try handle.read(upToCount: want), !data.isEmpty else {
                throw CairnError(.invalidArgument, "\(url.lastPathComponent) ended before the bytes to send")
            }
            position += Int64(data.count)
            return data
        }
        var chunk = Data(capacity: want)
        while chunk.count < want {
            let index = position / Int64(SealedFile.segmentSize)
            let plain = try segment(index, of: sealed)
            let within = Int(position - index * Int64(SealedFile.segmentSize))
            let take = min(want - chunk.count, plain.count - within)
            guard take > 0 else { throw SealedFile.corrupted("\(url.lastPathComponent) ends inside its last segment") }
            chunk.append(plain[(plain.startIndex + within)..<(plain.startIndex + within + take)])
            position += Int64(take)
        }
        return chunk
    }

    /// Every byte left in the range.
    func readToEnd() throws -> Data {
        var data = Data(capacity: Int(end - position))
        while let chunk = try next(upTo: 1 << 20) { data.append(chunk) }
        return data
    }

    private func segment(_ index: Int64, of sealed: Sealed) throws -> Data {
        if let segment, segment.index == index { return segment.bytes }
        try handle.seek(toOffset: UInt64(SealedFile.headerSize) + UInt64(index) * UInt64(SealedFile.sealedSegmentSize))
        let bytes = try handle.read(upToCount: SealedFile.sealedSegmentSize) ?? Data()
        guard let plain = SealedFile.open(bytes, fileID: sealed.fileID, index: index, isLast: index == sealed.lastIndex, with: sealed.sealing)
        else { throw SealedFile.corrupted("segment \(index) of \(url.lastPathComponent) does not authenticate") }
        segment = (index, plain)
        return plain
    }
}
