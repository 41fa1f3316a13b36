import Foundation
import NIOCore
import _NIOFileSystem

/// Keeps each file's bytes in a file of its own under a directory: `ROOT/PROJECT/ID`, both made by the server
/// (a project name and a UUID), so a user-given name never reaches the file system. Reads and writes go through
/// NIO's non-blocking file system and stream in chunks: a transfer never holds a whole file in memory.
///
/// ```swift
/// let blobs = DirectoryBlobStore(root: dataDirectory.appending(path: "files"))
/// ```
public struct DirectoryBlobStore: BlobStore {
    /// The directory that holds one folder per project.
    public let root: URL
    /// Bytes gathered before each write to disk.
    let writeChunk = 1 << 20
    /// Bytes per chunk read.
    let readChunk = 256 * 1024

    /// A store under `root` (made when the first blob is).
    public init(root: URL) { self.root = root }

    func path(_ project: String, _ id: String) -> FilePath {
        precondition(Self.isSafeComponent(project) && Self.isSafeComponent(id), "blob keys are server-made names")
        return FilePath(root.path).appending(project).appending(id)
    }

    /// A key part that cannot leave its folder: no separators, no dot-only names, nothing empty.
    static func isSafeComponent(_ part: String) -> Bool {
        !part.isEmpty && part != "." && part != ".." && !part.contains("/") && !part.contains("\0")
    }

    /// Makes `ROOT/PROJECT/ID` empty (its folder too) and syncs it.
    public func create(project: String, id: String) async throws {
        let file = path(project, id)
        try await FileSystem.shared.createDirectory(at: file.removingLastComponent(), withIntermediateDirectories: true)
        try await FileSystem.shared.withFileHandle(forWritingAt: file, options: .newFile(replaceExisting: true)) { handle in
            try await handle.synchronize()
        }
    }

    /// The file's size on disk.
    public func size(project: String, id: String) async throws -> Int64 {
        try await FileSystem.shared.info(forFileAt: path(project, id))?.size ?? 0
    }

    /// Cuts the file at `offset`, then writes in 1 MB pieces and syncs before returning. When the disk refuses a
    /// write (full), the file is cut back to `offset`: the request's bytes are dropped, their room given back, and the
    /// upload goes on from `offset` once space returns.
    public func write<Chunks: AsyncSequence>(
        project: String, id: String, at offset: Int64, limit: Int64, from chunks: Chunks
    ) async throws -> Int64 where Chunks.Element == ByteBuffer {
        let writeChunk = self.writeChunk
        let (end, stop, overLimit) = try await FileSystem.shared.withFileHandle(
            forWritingAt: path(project, id), options: .modifyFile(createIfNecessary: true)
        ) { handle in
            try await handle.resize(to: .bytes(offset))
            do {
                return try await Self.write(chunks, to: handle, at: offset, limit: limit, writeChunk: writeChunk)
            } catch {
                try? await handle.resize(to: .bytes(offset))
                try? await handle.synchronize()
                throw error
            }
        }
        if overLimit { throw BlobWriteError.limitExceeded(kept: end) }
        if let stop { throw BlobWriteError.interrupted(kept: end, underlying: stop) }
        return end
    }

    /// Writes `chunks` from `offset` up to `limit` and syncs: the new end, what stopped the body (its bytes that
    /// arrived are kept), and whether it went past the limit.
    private static func write<Chunks: AsyncSequence>(
        _ chunks: Chunks, to handle: WriteFileHandle, at offset: Int64, limit: Int64, writeChunk: Int
    ) async throws -> (Int64, (any Error)?, Bool) where Chunks.Element == ByteBuffer {
        var end = offset
        var pending = ByteBuffer()
        var stop: (any Error)?
        var overLimit = false
        var body = chunks.makeAsyncIterator()
        while true {
            // Only the body's own failure stops here; a failed write to disk throws.
            let next: ByteBuffer?
            do { next = try await body.next() } catch {
                stop = error
                break
            }
            guard var chunk = next else { break }
            let room = limit - end - Int64(pending.readableBytes)
            if Int64(chunk.readableBytes) > room {
                if room > 0, let part = chunk.readSlice(length: Int(room)) { pending.writeImmutableBuffer(part) }
                overLimit = true
                break
            }
            pending.writeBuffer(&chunk)
            if pending.readableBytes >= writeChunk {
                end += try await handle.write(contentsOf: pending, toAbsoluteOffset: end)
                pending.clear()
            }
        }
        // What arrived is kept, whatever stopped the body.
        if pending.readableBytes > 0 { end += try await handle.write(contentsOf: pending, toAbsoluteOffset: end) }
        try await handle.synchronize()
        return (end, stop, overLimit)
    }

    /// Reads 256 KB chunks through NIO's file system.
    public func read(project: String, id: String, range: Range<Int64>, into body: (ByteBuffer) async throws -> Void) async throws {
        guard !range.isEmpty else { return }
        try await FileSystem.shared.withFileHandle(forReadingAt: path(project, id)) { handle in
            for try await chunk in handle.readChunks(in: range, chunkLength: .bytes(Int64(readChunk))) {
                try await body(chunk)
            }
        }
    }

    /// Deletes the file.
    public func remove(project: String, id: String) async throws {
        try await FileSystem.shared.removeItem(at: path(project, id), recursively: false)
    }
}
