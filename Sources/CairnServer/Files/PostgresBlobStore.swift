import CairnProtocol
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Keeps files' bytes in PostgreSQL, in chunks of the `file_chunks` table, so that every server instance on the
/// database serves every file and resumes every upload, whichever instance took its first bytes.
///
/// Chunk `n` of a blob holds its bytes from `n × chunkSize`; every chunk but the last is full. Each chunk is
/// written by a statement of its own, committed (and so durable) before the next, so an upload broken off keeps
/// every chunk that arrived. A write holds a session advisory lock on the blob for its whole length, so two
/// instances never interleave chunks of one file.
///
/// ```swift
/// let storage = try await PostgresStorage(url: url)
/// let blobs = PostgresBlobStore(storage: storage)
/// ```
public struct PostgresBlobStore: BlobStore {
    let client: PostgresPool
    let logger: Logger
    /// Bytes per stored chunk.
    let chunkSize: Int

    /// A store on `storage`'s database (its migrations made the table), in chunks of 1 MiB.
    public init(storage: PostgresStorage) { self.init(storage: storage, chunkSize: 1 << 20) }

    /// A store in chunks of `chunkSize` bytes (fixed per database; tests use small ones to cross chunks).
    init(storage: PostgresStorage, chunkSize: Int) {
        self.client = storage.client
        self.logger = storage.logger
        self.chunkSize = chunkSize
    }

    /// Deletes any chunks left behind: an empty blob has none.
    public func create(project: String, id: String) async throws {
        try await remove(project: project, id: id)
    }

    /// The sum of the chunks' lengths.
    public func size(project: String, id: String) async throws -> Int64 {
        let rows = try await client.query(
            "SELECT coalesce(sum(octet_length(bytes)), 0)::int8 FROM file_chunks WHERE project = \(project) AND id = \(id)", logger: logger)
        for try await size in rows.decode(Int64.self) { return size }
        return 0
    }

    /// Cuts the blob at `offset`, then stores full chunks as they fill and the last part when the body ends.
    public func write<Chunks: AsyncSequence>(
        project: String, id: String, at offset: Int64, limit: Int64, from chunks: Chunks
    ) async throws -> Int64 where Chunks.Element == ByteBuffer {
        let chunkSize = Int64(chunkSize)
        // Iterated only inside the closure, which runs once, here: never by two tasks.
        nonisolated(unsafe) let chunks = chunks
        let (end, stop, overLimit) = try await client.withConnection { connection in
            // Keyed like the server's other advisory locks: PostgreSQL's hash of a name.
            let lock = "cairn.blob:\(project)/\(id)"
            try await connection.query("SELECT pg_advisory_lock(hashtextextended(\(lock), 0))", logger: logger)
            do {
                let outcome = try await Self.write(
                    project: project, id: id, at: offset, limit: limit, chunkSize: chunkSize, from: chunks, on: connection, logger: logger)
                try await connection.query("SELECT pg_advisory_unlock(hashtextextended(\(lock), 0))", logger: logger)
                return outcome
            } catch {
                // A connection that cannot unlock is broken; closing it releases the lock.
                _ = try? await connection.query("SELECT pg_advisory_unlock(hashtextextended(\(lock), 0))", logger: logger)
                throw error
            }
        }
        if overLimit { throw BlobWriteError.limitExceeded(kept: end) }
        if let stop { throw BlobWriteError.interrupted(kept: end, underlying: stop) }
        return end
    }

    /// The write, on a connection holding the blob's lock: the stored size, what stopped the body, and whether it
    /// held more than `limit`.
    private static func write<Chunks: AsyncSequence>(
        project: String, id: String, at offset: Int64, limit: Int64, chunkSize: Int64, from chunks: Chunks,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> (Int64, (any Error)?, Bool) where Chunks.Element == ByteBuffer {
        // The chunk that holds `offset` is rewritten whole: it starts with the bytes kept before it.
        var index = offset / chunkSize
        try await connection.query(
            "DELETE FROM file_chunks WHERE project = \(project) AND id = \(id) AND chunk > \(index)", logger: logger)
        var pending = ByteBuffer()
        let keep = Int(offset - index * chunkSize)
        if keep > 0 {
            let rows = try await connection.query(
                """
                SELECT substring(bytes FROM 1 FOR \(keep)::int4) FROM file_chunks WHERE project = \(project) AND id = \(id) AND chunk = \(index)
                """, logger: logger)
            for try await kept in rows.decode(ByteBuffer.self) { pending = kept }
        }
        var stored = index * chunkSize
        var stop: (any Error)?
        var overLimit = false
        do {
            for try await var chunk in chunks {
                let room = limit - stored - Int64(pending.readableBytes)
                if Int64(chunk.readableBytes) > room {
                    if room > 0, let part = chunk.readSlice(length: Int(room)) { pending.writeImmutableBuffer(part) }
                    overLimit = true
                    break
                }
                pending.writeBuffer(&chunk)
                while pending.readableBytes >= Int(chunkSize) {
                    let full = pending.readSlice(length: Int(chunkSize))!
                    try await Self.store(full, project: project, id: id, chunk: index, on: connection, logger: logger)
                    index += 1
                    stored += chunkSize
                }
                pending.discardReadBytes()
            }
        } catch {
            stop = error
        }
        // What arrived is kept, whatever stopped the body; an empty last part removes the chunk it replaces.
        if pending.readableBytes > 0 {
            try await Self.store(pending, project: project, id: id, chunk: index, on: connection, logger: logger)
            stored += Int64(pending.readableBytes)
        } else {
            try await connection.query(
                "DELETE FROM file_chunks WHERE project = \(project) AND id = \(id) AND chunk = \(index)", logger: logger)
        }
        return (stored, stop, overLimit)
    }

    /// Reads the chunks that cover `range`, one statement per chunk, handing each slice to `body`.
    public func read(project: String, id: String, range: Range<Int64>, into body: (ByteBuffer) async throws -> Void) async throws {
        guard !range.isEmpty else { return }
        let chunkSize = Int64(chunkSize)
        for index in (range.lowerBound / chunkSize)...((range.upperBound - 1) / chunkSize) {
            let start = max(range.lowerBound - index * chunkSize, 0)
            let end = min(range.upperBound - index * chunkSize, chunkSize)
            var slice: ByteBuffer?
            let rows = try await client.query(
                """
                SELECT substring(bytes FROM \(start + 1)::int4 FOR \(end - start)::int4) FROM file_chunks
                WHERE project = \(project) AND id = \(id) AND chunk = \(index)
                """, logger: logger)
            for try await bytes in rows.decode(ByteBuffer.self) { slice = bytes }
            guard let slice, Int64(slice.readableBytes) == end - start else {
                throw ErrorBody(code: .internalError, message: "file \(id) has fewer bytes than asked for")
            }
            try await body(slice)
        }
    }

    /// Deletes every chunk.
    public func remove(project: String, id: String) async throws {
        try await client.query("DELETE FROM file_chunks WHERE project = \(project) AND id = \(id)", logger: logger)
    }

    /// Inserts or replaces one chunk (its own statement, so committed when it returns).
    private static func store(
        _ bytes: ByteBuffer, project: String, id: String, chunk: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO file_chunks (project, id, chunk, bytes) VALUES (\(project), \(id), \(Int32(chunk)), \(bytes))
            ON CONFLICT (project, id, chunk) DO UPDATE SET bytes = excluded.bytes
            """, logger: logger)
    }
}
