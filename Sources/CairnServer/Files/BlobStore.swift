import CairnProtocol
import Crypto
import NIOCore

/// Where a file's bytes are kept, by project and file id. The server's files layer decides what is written when;
/// a blob store only moves bytes. ``DirectoryBlobStore`` keeps them under the data directory; other stores (in a
/// database, S3-compatible) implement the same protocol.
///
/// Keys are a project name and a server-made file id, never a user-given name.
public protocol BlobStore: Sendable {
    /// Makes an empty blob for a new file (replacing any left behind).
    func create(project: String, id: String) async throws
    /// The bytes kept so far; 0 when there is no blob.
    func size(project: String, id: String) async throws -> Int64
    /// Writes `chunks` from byte `offset` on (cutting off anything after it first), at most `limit` bytes in all,
    /// and makes them durable. Bytes that arrived before an error (a broken connection, or more than `limit` bytes,
    /// which throws ``BlobWriteError/limitExceeded``) are kept.
    /// - Returns: the blob's size afterwards.
    func write<Chunks: AsyncSequence>(
        project: String, id: String, at offset: Int64, limit: Int64, from chunks: Chunks
    ) async throws -> Int64 where Chunks.Element == ByteBuffer
    /// Reads the bytes of `range`, handing them to `body` in chunks, in order.
    func read(project: String, id: String, range: Range<Int64>, into body: (ByteBuffer) async throws -> Void) async throws
    /// Removes the blob; nothing happens when there is none.
    func remove(project: String, id: String) async throws
}

/// Why a blob write stopped.
public enum BlobWriteError: Error, Sendable {
    /// The body held more bytes than the file's declared size; the bytes up to the limit were kept.
    case limitExceeded(kept: Int64)
    /// The body broke off (its sequence threw); the bytes that arrived were kept.
    case interrupted(kept: Int64, underlying: any Error)
}

extension BlobStore {
    /// The lowercase hex SHA-256 of the blob's first `size` bytes, read in chunks.
    func sha256(project: String, id: String, size: Int64) async throws -> String {
        var hasher = SHA256()
        try await read(project: project, id: id, range: 0..<size) { chunk in
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        }
        return Hex.encode(hasher.finalize())
    }
}
