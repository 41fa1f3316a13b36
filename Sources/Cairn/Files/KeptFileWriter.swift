import Foundation

/// Appends a download's bytes to a file the store keeps, encrypting them in segments when the store is encrypted.
/// Transports get one from ``TransportRequest/openDownload(_:)``, write each chunk as it arrives, then close it.
///
/// ```swift
/// let file = try request.openDownload(destination)
/// defer { try? file.close() }
/// for try await chunk in body { try chunk.withUnsafeBytes { try file.write($0) } }
/// ```
///
/// An encrypted file holds back its last segment until ``close()``: a download broken off without closing keeps
/// every whole segment, and the next one resumes where they end.
public final class KeptFileWriter {
    private let url: URL
    private let handle: FileHandle
    private let sealing: FileSealing?
    private var fileID = Data()
    private var nextIndex: Int64 = 0
    private var pending = Data()
    private var closed = false
    private var sealer: SegmentSealer?

    /// The bytes the file held when it was opened: where a download resumes.
    public let startLength: Int64

    /// Opens `url` for appending, making it when missing. With `sealing`, an existing sealed file is taken up after
    /// its last segment that authenticates, and a file in the clear is started again.
    init(_ url: URL, sealing: FileSealing?) throws {
        self.url = url
        self.sealing = sealing
        if !FileManager.default.fileExists(atPath: url.path) {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw CairnError(.storeFailed, "\(url.lastPathComponent) could not be created")
            }
        }
        handle = try FileHandle(forUpdating: url)
        guard let sealing else {
            startLength = Int64(try handle.seekToEnd())
            return
        }
        pending.reserveCapacity(SealedFile.segmentSize)
        var fileID = self.fileID, nextIndex = self.nextIndex, pending = self.pending
        startLength = try Self.sayingWhenFull { [handle] in
            try Self.takeUp(handle, sealing: sealing, fileID: &fileID, nextIndex: &nextIndex, pending: &pending)
        }
        (self.fileID, self.nextIndex, self.pending) = (fileID, nextIndex, pending)
        sealer = SegmentSealer(handle: handle, sealing: sealing, fileID: fileID)
    }

    deinit { try? close() }

    /// The plaintext bytes a kept file holds, as ``init(_:sealing:)`` would take it up (a sealed file's torn tail
    /// does not count).
    static func resumableLength(of url: URL, sealing: FileSealing?) throws -> Int64 {
        guard FileManager.default.fileExists(atPath: url.path) else { return 0 }
        let writer = try KeptFileWriter(url, sealing: sealing)
        try writer.close()
        return writer.startLength
    }

    /// Appends bytes. A full disk fails with `storage_full`, whoever called (a download streaming into the file too).
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !closed else { throw CairnError(.storeFailed, "\(url.lastPathComponent) was already closed") }
        try Self.sayingWhenFull { try append(bytes) }
    }

    private func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard let sealer else {
            try handle.write(contentsOf: bytes)
            return
        }
        // The last segment waits for close(), or for more bytes: it is sealed as the last one. `pending` never holds
        // more than a segment, so each byte is copied once before it is sealed.
        var input = bytes[...]
        while !input.isEmpty {
            if pending.count == SealedFile.segmentSize {
                try sealer.seal(pending, index: nextIndex)
                nextIndex += 1
                pending = Data(capacity: SealedFile.segmentSize)
            }
            let take = min(SealedFile.segmentSize - pending.count, input.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: input.prefix(take)))
            input = input.dropFirst(take)
        }
    }

    /// Appends every byte `reader` gives, then closes the file.
    func copy(from reader: KeptFileReader) throws {
        while let chunk = try reader.next(upTo: 1 << 20) { try write(chunk) }
        try close()
    }

    /// Appends `data`.
    public func write(_ data: Data) throws { try data.withUnsafeBytes { try write($0) } }

    /// Seals the last segment, flushes nothing more, and closes the file. Closing twice does nothing.
    public func close() throws {
        guard !closed else { return }
        closed = true
        defer { try? handle.close() }
        if let sealing, let sealer {
            try Self.sayingWhenFull {
                try sealer.finish()
                try handle.write(contentsOf: try SealedFile.seal(pending, fileID: fileID, index: nextIndex, isLast: true, with: sealing))
            }
            pending = Data()
        }
    }

    /// Runs `body`, turning a write that found the disk full into `storage_full` (other errors pass unchanged).
    private static func sayingWhenFull<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch where !(error is CairnError) && DiskFull.matches(error) { throw CairnError(wrapping: error) }
    }

    /// Positions `handle` to append to a sealed file: a new or clear file gets a new header; an existing one keeps
    /// its whole segments and reopens its last (the final one goes back into `pending`). Returns the plaintext length.
    private static func takeUp(
        _ handle: FileHandle, sealing: FileSealing, fileID: inout Data, nextIndex: inout Int64, pending: inout Data
    ) throws -> Int64 {
        try handle.seek(toOffset: 0)
        let header = try handle.read(upToCount: SealedFile.headerSize) ?? Data()
        guard header.count == SealedFile.headerSize, let id = try? SealedFile.fileID(fromHeader: header) else {
            // Empty, in the clear (kept before the store was encrypted), or torn before its header was whole.
            try handle.truncate(atOffset: 0)
            try handle.seek(toOffset: 0)
            fileID = Data((0..<SealedFile.headerSize - 12).map { _ in UInt8.random(in: 0...255) })
            try handle.write(contentsOf: SealedFile.header(fileID: fileID))
            return 0
        }
        fileID = id
        let sealedSize = Int64(SealedFile.sealedSegmentSize), headerSize = Int64(SealedFile.headerSize)
        while true {
            let size = Int64(try handle.seekToEnd())
            let body = size - headerSize
            guard body > 0 else {
                nextIndex = 0
                return 0
            }
            let lastIndex = (body + sealedSize - 1) / sealedSize - 1
            let lastStart = headerSize + lastIndex * sealedSize
            try handle.seek(toOffset: UInt64(lastStart))
            let last = try handle.read(upToCount: SealedFile.sealedSegmentSize) ?? Data()
            if let plain = SealedFile.open(last, fileID: id, index: lastIndex, isLast: true, with: sealing) {
                // Closed properly: its last segment opens again to take more bytes.
                try handle.truncate(atOffset: UInt64(lastStart))
                try handle.seek(toOffset: UInt64(lastStart))
                nextIndex = lastIndex
                pending = plain
                return lastIndex * Int64(SealedFile.segmentSize) + Int64(plain.count)
            }
            if last.count == SealedFile.sealedSegmentSize, SealedFile.open(last, fileID: id, index: lastIndex, isLast: false, with: sealing) != nil {
                // Broken off before closing: every whole segment stands.
                try handle.seekToEnd()
                nextIndex = lastIndex + 1
                return nextIndex * Int64(SealedFile.segmentSize)
            }
            // A torn write at the end: drop it and look again.
            try handle.truncate(atOffset: UInt64(lastStart))
        }
    }
}
