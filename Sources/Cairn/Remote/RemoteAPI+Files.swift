import CairnProtocol
import Foundation

/// The Files routes of PROTOCOL.md as typed calls.
extension RemoteAPI {
    var filesPath: String { "/v1/projects/\(project)/files" }

    /// Step 1: a new file slot.
    func createFile(_ request: NewFileRequest) async throws -> FileMetadata {
        let response = try await send(method: "POST", path: filesPath, body: try CairnJSON.encode(request), accept: [201])
        return try decode(FileMetadata.self, response)
    }

    /// The bytes of an upload the server has (`HEAD` of its upload URL).
    func uploadOffset(fileID: String) async throws -> Int64 {
        let response = try await send(method: "HEAD", path: "\(filesPath)/\(fileID)/upload")
        guard let offset = UploadOffset.parse(response.header(CairnHeader.uploadOffset)) else {
            throw CairnError.badResponse("the upload answered no \(CairnHeader.uploadOffset)")
        }
        return offset
    }

    /// Step 2: sends `slice` as the chunk starting at `slice.offset` of a `total`-byte file; returns the new offset.
    /// Made once: a broken upload is resumed from the offset the server reports, not resent.
    func uploadChunk(fileID: String, slice: TransportFileSlice, total: Int64, timeout: Duration, progress: @escaping @Sendable (Int64) -> Void)
        async throws -> Int64
    {
        let range = slice.length == 0 ? "bytes */\(total)" : "bytes \(slice.offset)-\(slice.offset + slice.length - 1)/\(total)"
        let response = try await send(
            method: "PUT", path: "\(filesPath)/\(fileID)/upload", headers: [("Content-Range", range)], retries: false,
            transfer: Transfer(upload: slice, progress: progress, timeout: timeout))
        return UploadOffset.parse(response.header(CairnHeader.uploadOffset)) ?? slice.offset + slice.length
    }

    /// Step 3.
    func completeFile(fileID: String) async throws -> FileMetadata {
        try decode(FileMetadata.self, try await send(method: "POST", path: "\(filesPath)/\(fileID)/complete"))
    }

    /// A file's metadata.
    func fileMetadata(fileID: String) async throws -> FileMetadata {
        try decode(FileMetadata.self, try await send(method: "GET", path: "\(filesPath)/\(fileID)"))
    }

    /// One page of a file search.
    func searchFiles(_ search: FileSearch, after: String?) async throws -> FileList {
        var query: [String] = search.statuses.map { "status=\($0.rawValue)" }
        if let name = search.name { query.append("name=\(PercentEncoding.encode(name))") }
        query += search.tags.map { "tag=\(PercentEncoding.encode($0))" }
        query.append("limit=\(search.pageSize)")
        if let after { query.append("after=\(PercentEncoding.encode(after))") }
        return try decode(FileList.self, try await send(method: "GET", path: filesPath + "?" + query.joined(separator: "&")))
    }

    /// Renames, retags or publishes a file.
    func updateFile(fileID: String, _ update: FileUpdate) async throws -> FileMetadata {
        try decode(FileMetadata.self, try await send(method: "PATCH", path: "\(filesPath)/\(fileID)", body: try CairnJSON.encode(update)))
    }

    /// Adds `users` to (`adding`) or takes them off a private file's shared users.
    func shareFile(fileID: String, users: [String], adding: Bool) async throws -> FileMetadata {
        try decode(FileMetadata.self, try await send(
            method: "POST", path: "\(filesPath)/\(fileID)/\(adding ? "share" : "unshare")", body: try CairnJSON.encode(FileShareRequest(users: users))))
    }

    /// Deletes a file on the server.
    func deleteFile(fileID: String) async throws -> FileMetadata {
        try decode(FileMetadata.self, try await send(method: "DELETE", path: "\(filesPath)/\(fileID)"))
    }

    /// Appends the bytes of a completed file from `offset` on to `destination`, streamed, handing each chunk to
    /// `received` too.
    func downloadFile(
        fileID: String, from offset: Int64, to destination: URL, sealing: FileSealing?, timeout: Duration,
        progress: @escaping @Sendable (Int64) -> Void,
        received: @escaping @Sendable (UnsafeRawBufferPointer) -> Void
    ) async throws -> TransportResponse {
        try await send(
            method: "GET", path: "\(filesPath)/\(fileID)/content", headers: offset > 0 ? [("Range", "bytes=\(offset)-")] : [],
            accept: [200, 206], retries: false, transfer: Transfer(downloadTo: destination, sealing: sealing, progress: progress, received: received, timeout: timeout))
    }
}

/// What a file search asks for.
///
/// ```swift
/// let photos = try await client.files.search(FileSearch(tags: ["site-7"], statuses: [.completed]))
/// ```
public struct FileSearch: Sendable, Hashable {
    /// A `like` pattern the name must match (`%` any run, `_` one character, ASCII case-insensitive).
    public var name: String?
    /// Tags that must all be present.
    public var tags: [String]
    /// The statuses to return (the server's default, `new` and `completed`, when empty).
    public var statuses: [FileStatus]
    /// Files per page asked of the server (1...1000).
    public var pageSize: Int

    /// A search; every part is optional.
    public init(name: String? = nil, tags: [String] = [], statuses: [FileStatus] = [], pageSize: Int = 100) {
        self.name = name
        self.tags = tags
        self.statuses = statuses
        self.pageSize = min(max(pageSize, 1), 1000)
    }
}
