import AsyncHTTPClient
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import NIOCore

/// The three upload steps over HTTP, as any client sends them.
extension Fixture {
    static let files = "/v1/projects/\(project)/files"

    /// Step 1 as `user`; the raw reply.
    func createFile(_ user: String = "alice", _ body: JSONValue) async throws -> HTTPReply {
        try await http.send(.POST, Self.files, token: tokens[user], json: body)
    }

    /// Step 1 as `user`, expecting `201`; the metadata.
    func newFile(
        _ user: String = "alice", name: String = "photo.jpg", size: Int, sha256: String? = nil, tags: [String] = [], public: Bool = false,
        attachTo: FileAttachment? = nil
    ) async throws -> FileMetadata {
        let request = NewFileRequest(
            name: name, contentType: "image/jpeg", size: Int64(size), sha256: sha256, tags: tags, public: `public`, attachTo: attachTo)
        let reply = try await http.send(.POST, Self.files, token: tokens[user], value: request)
        guard reply.status == 201 else { throw FileTestError.status(reply.status, String(decoding: reply.body, as: UTF8.self)) }
        return try reply.decode(FileMetadata.self)
    }

    /// Step 2: `PUT` of `bytes`, with a `Content-Range` when `range` is given.
    func put(_ file: FileMetadata, _ bytes: Data, range: String? = nil, user: String = "alice") async throws -> HTTPReply {
        try await http.send(.PUT, file.uploadUrl, token: tokens[user], body: bytes, headers: range.map { ["Content-Range": $0] } ?? [:])
    }

    /// Step 3.
    func complete(_ file: FileMetadata, user: String = "alice") async throws -> HTTPReply {
        try await http.send(.POST, "\(Self.files)/\(file.id)/complete", token: tokens[user])
    }

    /// `HEAD` of the upload URL: the `Upload-Offset` answered.
    func offset(_ file: FileMetadata) async throws -> Int64? {
        let reply = try await http.send(.HEAD, file.uploadUrl, token: tokens["alice"])
        return reply.header("Upload-Offset").flatMap { Int64($0) }
    }

    /// All three steps; the completed metadata.
    func upload(_ bytes: Data, name: String = "photo.jpg", tags: [String] = [], public: Bool = false, attachTo: FileAttachment? = nil)
        async throws -> FileMetadata
    {
        let file = try await newFile(name: name, size: bytes.count, sha256: sha256(bytes), tags: tags, public: `public`, attachTo: attachTo)
        let put = try await put(file, bytes)
        guard put.status == 200 else { throw FileTestError.status(put.status, String(decoding: put.body, as: UTF8.self)) }
        let done = try await complete(file)
        guard done.status == 200 else { throw FileTestError.status(done.status, String(decoding: done.body, as: UTF8.self)) }
        return try done.decode(FileMetadata.self)
    }

    /// The metadata of `id` as `alice`.
    func metadata(_ id: String) async throws -> FileMetadata {
        try await http.send(.GET, "\(Self.files)/\(id)", token: tokens["alice"]).decode(FileMetadata.self)
    }
}

enum FileTestError: Error {
    case status(Int, String)
}

/// Lowercase hex SHA-256.
func sha256(_ data: Data) -> String { TestFiles.sha256(data) }

/// `count` bytes that differ from offset to offset.
func testBytes(_ count: Int, seed: UInt8 = 7) -> Data { TestFiles.bytes(count, seed: seed) }
