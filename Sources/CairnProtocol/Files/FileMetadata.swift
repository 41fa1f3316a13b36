import Foundation

/// Where a file's upload stands.
public enum FileStatus: String, Codable, Sendable, CaseIterable {
    /// Created; waiting for its bytes and `complete`. Deleted by the server after `expiresAt`.
    case new
    /// Every byte arrived and was verified: downloadable, and set on the record it is attached to.
    case completed
    /// Deleted: the bytes are gone, the metadata stays.
    case deleted
}

/// The record field a file is set on when its upload completes.
///
/// ```swift
/// let target = FileAttachment(collection: "notes", id: "n-1", field: "photo")
/// ```
public struct FileAttachment: Codable, Sendable, Hashable {
    /// The record's collection.
    public var collection: String
    /// The record's id.
    public var id: String
    /// A `file` field of the collection.
    public var field: String

    /// The field `field` of record `id` in `collection`.
    public init(collection: String, id: String, field: String) {
        self.collection = collection
        self.id = id
        self.field = field
    }
}

/// A file's metadata, as the server answers it (PROTOCOL.md, Files).
public struct FileMetadata: Codable, Sendable, Hashable, Identifiable {
    /// The file id the server made (a UUID); the value a record's `file` field holds.
    public var id: String
    /// The name given at creation or rename: metadata only, never a path on the server.
    public var name: String
    /// The MIME type answered on download.
    public var contentType: String
    /// The declared size in bytes.
    public var size: Int64
    /// Lowercase hex SHA-256 of the bytes: declared at creation, or computed at `complete`.
    public var sha256: String?
    /// Where the upload stands.
    public var status: FileStatus
    /// Free labels to search by.
    public var tags: [String]
    /// Whether anyone may download it without a token, at `/v1/public/files/{id}`.
    public var `public`: Bool
    /// When it was created.
    public var createdAt: Date
    /// When its metadata or status last changed.
    public var updatedAt: Date
    /// Who created it.
    public var createdBy: String
    /// The record field set to this file's id when the upload completes.
    public var attachTo: FileAttachment?
    /// The record version at which `complete` set the field; `nil` before.
    public var attachedVersion: Int64?
    /// Where the bytes go (`PUT`) and where the offset is asked (`HEAD`), relative to the server.
    public var uploadUrl: String
    /// The bytes received so far.
    public var uploadOffset: Int64
    /// When a `new` file is deleted unless completed; `nil` once it is not `new`.
    public var expiresAt: Date?
    /// Where the file came from, in the app's words (`camera`, `scan`, `import`); `nil` when not said.
    public var source: String?
    /// Who may see and change it beyond the project's roles (``FilePermissions``); project-wide when a server from
    /// before permissions does not say.
    public var permissions: FilePermissions

    /// Metadata with these values.
    public init(
        id: String, name: String, contentType: String, size: Int64, sha256: String?, status: FileStatus, tags: [String],
        public: Bool, createdAt: Date, updatedAt: Date, createdBy: String, attachTo: FileAttachment?, attachedVersion: Int64?,
        uploadUrl: String, uploadOffset: Int64, expiresAt: Date?, source: String? = nil, permissions: FilePermissions = .project
    ) {
        self.id = id
        self.name = name
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
        self.status = status
        self.tags = tags
        self.public = `public`
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.createdBy = createdBy
        self.attachTo = attachTo
        self.attachedVersion = attachedVersion
        self.uploadUrl = uploadUrl
        self.uploadOffset = uploadOffset
        self.expiresAt = expiresAt
        self.source = source
        self.permissions = permissions
    }

    private enum CodingKeys: String, CodingKey {
        case id, name, contentType, size, sha256, status, tags, `public`, createdAt, updatedAt, createdBy, attachTo, attachedVersion
        case uploadUrl, uploadOffset, expiresAt, source, permissions
    }

    /// Decodes metadata as a server answers it; a server from before sources and permissions leaves them out, and
    /// they read as `nil` and project-wide.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        contentType = try container.decode(String.self, forKey: .contentType)
        size = try container.decode(Int64.self, forKey: .size)
        sha256 = try container.decodeIfPresent(String.self, forKey: .sha256)
        status = try container.decode(FileStatus.self, forKey: .status)
        tags = try container.decode([String].self, forKey: .tags)
        `public` = try container.decode(Bool.self, forKey: .public)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        updatedAt = try container.decode(Date.self, forKey: .updatedAt)
        createdBy = try container.decode(String.self, forKey: .createdBy)
        attachTo = try container.decodeIfPresent(FileAttachment.self, forKey: .attachTo)
        attachedVersion = try container.decodeIfPresent(Int64.self, forKey: .attachedVersion)
        uploadUrl = try container.decode(String.self, forKey: .uploadUrl)
        uploadOffset = try container.decode(Int64.self, forKey: .uploadOffset)
        expiresAt = try container.decodeIfPresent(Date.self, forKey: .expiresAt)
        // Servers from before sources and permissions leave them out.
        source = try container.decodeIfPresent(String.self, forKey: .source)
        permissions = try container.decodeIfPresent(FilePermissions.self, forKey: .permissions) ?? .project
    }

    /// Encodes every key, `null` for absent optionals, as the protocol shows them.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(contentType, forKey: .contentType)
        try container.encode(size, forKey: .size)
        try container.encode(sha256, forKey: .sha256)
        try container.encode(status, forKey: .status)
        try container.encode(tags, forKey: .tags)
        try container.encode(`public`, forKey: .public)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(createdBy, forKey: .createdBy)
        try container.encode(attachTo, forKey: .attachTo)
        try container.encode(attachedVersion, forKey: .attachedVersion)
        try container.encode(uploadUrl, forKey: .uploadUrl)
        try container.encode(uploadOffset, forKey: .uploadOffset)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(source, forKey: .source)
        try container.encode(permissions, forKey: .permissions)
    }
}

/// A page of file search results: pass `next` as `after` for the following page.
public struct FileList: Codable, Sendable, Hashable {
    /// The files of this page, by id.
    public var files: [FileMetadata]
    /// The last id of this page when more may follow, else `nil`.
    public var next: String?

    /// A page of `files`.
    public init(files: [FileMetadata], next: String?) {
        self.files = files
        self.next = next
    }

    /// Encodes `next` as `null` on the last page.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(files, forKey: .files)
        try container.encode(next, forKey: .next)
    }
}
