import CairnProtocol
import Crypto
import NIOCore
import _NIOFileSystem

extension DirectoryBlobStore {
    /// What ``copy(project:id:length:to:)`` wrote.
    struct Copied: Sendable, Hashable {
        /// The bytes copied.
        var bytes: Int64
        /// Their lowercase hex SHA-256.
        var sha256: String
    }

    /// Copies the first `length` bytes of a blob (all it holds now when `nil`) into a new file of `target`, hashing
    /// them on the way, and syncs the copy. A blob shorter than `length`, or missing, is `not_found`: a copy of a
    /// given length is whole or fails.
    func copy(project: String, id: String, length: Int64?, to target: DirectoryBlobStore) async throws -> Copied {
        let held = try await FileSystem.shared.info(forFileAt: path(project, id))?.size
        guard let held, held >= (length ?? 0) else {
            throw ErrorBody(code: .notFound, message: "file \(project)/\(id) has \(held.map { "\($0) bytes" } ?? "no bytes") in \(root.path)")
        }
        let wanted = length ?? held
        let destination = target.path(project, id)
        try await FileSystem.shared.createDirectory(at: destination.removingLastComponent(), withIntermediateDirectories: true)
        var hasher = SHA256()
        let written = try await FileSystem.shared.withFileHandle(forWritingAt: destination, options: .newFile(replaceExisting: false)) { output in
            var offset: Int64 = 0
            try await read(project: project, id: id, range: 0..<wanted) { chunk in
                chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                offset += try await output.write(contentsOf: chunk, toAbsoluteOffset: offset)
            }
            try await output.synchronize()
            return offset
        }
        // A blob cut while it was read: an error when its length was asked for, else the bytes that were there.
        if let length, written != length {
            throw ErrorBody(code: .notFound, message: "file \(project)/\(id) was cut to \(written) of its \(length) bytes while it was copied")
        }
        return Copied(bytes: written, sha256: Hex.encode(hasher.finalize()))
    }
}
