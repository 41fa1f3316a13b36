import CairnProtocol
import Foundation

/// A file's metadata row as stored. Its bytes live in a ``BlobStore``; how many arrived is the blob's size.
public struct StoredFile: Sendable, Hashable {
    /// The project the file belongs to.
    public var project: String
    /// The id the server made (a lowercase UUID).
    public var id: String
    /// The name: metadata only.
    public var name: String
    /// The MIME type answered on download.
    public var contentType: String
    /// The declared size in bytes.
    public var size: Int64
    /// Lowercase hex SHA-256: declared at creation, or computed at `complete`.
    public var sha256: String?
    /// Where the upload stands.
    public var status: FileStatus
    /// Free labels, in the order given.
    public var tags: [String]
    /// Readable without a token.
    public var isPublic: Bool
    /// When it was created.
    public var createdAt: Date
    /// When its metadata or status last changed.
    public var updatedAt: Date
    /// Who created it.
    public var createdBy: String
    /// The record field set when the upload completes.
    public var attachTo: FileAttachment?
    /// The record version at which the field was set.
    public var attachedVersion: Int64?
    /// When a `new` file is swept; `nil` once it is not `new`.
    public var expiresAt: Date?
    /// Where it came from, in the app's words.
    public var source: String?
    /// Who may see and change it (project-wide for rows from before permissions: their column is `NULL`).
    public var permissions: FilePermissions

    /// A row with these values.
    public init(
        project: String, id: String, name: String, contentType: String, size: Int64, sha256: String?, status: FileStatus,
        tags: [String], isPublic: Bool, createdAt: Date, updatedAt: Date, createdBy: String, attachTo: FileAttachment?,
        attachedVersion: Int64?, expiresAt: Date?, source: String? = nil, permissions: FilePermissions = .project
    ) {
        self.project = project
        self.id = id
        self.name = name
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
        self.status = status
        self.tags = tags
        self.isPublic = isPublic
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.createdBy = createdBy
        self.attachTo = attachTo
        self.attachedVersion = attachedVersion
        self.expiresAt = expiresAt
        self.source = source
        self.permissions = permissions
    }

    /// True when the file is private (``FileAccess/private``).
    var isPrivate: Bool { permissions.access == .private }
}

/// Which files a search returns, by id.
public struct FileQuery: Sendable, Hashable {
    /// The statuses to return.
    public var statuses: Set<FileStatus>
    /// A `like` pattern the name must match (`%` any run, `_` one character, ASCII case-insensitive).
    public var namePattern: String?
    /// Tags that must all be present.
    public var tags: [String]
    /// Only ids after this one.
    public var after: String?
    /// At most this many.
    public var limit: Int

    /// A query with these values.
    public init(statuses: Set<FileStatus>, namePattern: String? = nil, tags: [String] = [], after: String? = nil, limit: Int) {
        self.statuses = statuses
        self.namePattern = namePattern
        self.tags = tags
        self.after = after
        self.limit = limit
    }
}

/// A project's file limits; `nil` values fall back to the server's configuration.
public struct FileLimits: Sendable, Hashable, Codable {
    /// The largest file, in bytes.
    public var maximumFileBytes: Int64?
    /// The most bytes of `new` and `completed` files the project may hold.
    public var maximumProjectBytes: Int64?

    /// Limits of these values.
    public init(maximumFileBytes: Int64? = nil, maximumProjectBytes: Int64? = nil) {
        self.maximumFileBytes = maximumFileBytes
        self.maximumProjectBytes = maximumProjectBytes
    }
}

/// The file metadata primitives of a storage backend. The rules (limits, upload steps, attaching) live in the
/// server's files layer; the bytes live in a ``BlobStore``.
public protocol FileCatalog: Sendable {
    /// Inserts a new file row when the project's `new` and `completed` files, with this one, hold at most
    /// `projectBytesLimit` bytes (any total when `nil`); returns false, inserting nothing, otherwise.
    func insertFile(_ file: StoredFile, projectBytesLimit: Int64?) async throws -> Bool
    /// The file `id` of `project`, in any status.
    func file(project: String, id: String) async throws -> StoredFile?
    /// The file `id` in any project (for public downloads, which carry no project).
    func file(id: String) async throws -> StoredFile?
    /// Replaces the row of `file` when its stored status is `expected`; returns false, changing nothing, otherwise.
    func replaceFile(_ file: StoredFile, ifStatus expected: FileStatus) async throws -> Bool
    /// The files of `project` matching `query`, by id.
    func searchFiles(project: String, query: FileQuery) async throws -> [StoredFile]
    /// `new` files whose `expiresAt` is before `date`, at most `limit`, oldest first.
    func expiredFiles(before date: Date, limit: Int) async throws -> [StoredFile]
    /// Deletes the row of a `new` file; returns false when it is not there or not `new`.
    func removeNewFile(project: String, id: String) async throws -> Bool
    /// The ids among `ids` of `completed` files of `project`.
    func completedFiles(project: String, ids: [String]) async throws -> Set<String>
    /// The project's own file limits (values not set are `nil`).
    func fileLimits(project: String) async throws -> FileLimits
    /// Sets the project's own file limits; `not_found` for an unknown project.
    func setFileLimits(project: String, limits: FileLimits) async throws
}

extension StoredFile {
    /// The `files` table's columns, in the one order both backends read and write them.
    static let columnList = """
        project, id, name, content_type, size, sha256, status, tags, public, created_at, updated_at, created_by, attach_to, \
        attached_version, expires_at, source, permissions
        """

    /// The tags as the JSON array text the `tags` column holds.
    var tagsText: String { JSONValue.array(tags.map { .string($0) }).jsonText() }

    /// The attachment as the JSON object text the `attach_to` column holds.
    var attachToText: String? {
        attachTo.map { target in
            JSONValue.object(["collection": .string(target.collection), "id": .string(target.id), "field": .string(target.field)]).jsonText()
        }
    }

    /// The `permissions` column: `NULL` for project-wide (as every row from before permissions), else the JSON text.
    var permissionsText: String? {
        permissions == .project ? nil : String(decoding: (try? CairnJSON.encode(permissions)) ?? Data(), as: UTF8.self)
    }

    /// The permissions in a `permissions` column's text; project-wide for `NULL`.
    static func permissions(fromText text: String?) throws -> FilePermissions {
        guard let text else { return .project }
        return try CairnJSON.decode(FilePermissions.self, from: Data(text.utf8))
    }

    /// The tags in a `tags` column's text.
    static func tags(fromText text: String) throws -> [String] {
        try JSONValue(parsing: text).arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// The attachment in an `attach_to` column's text.
    static func attachment(fromText text: String) throws -> FileAttachment {
        let object = try JSONValue(parsing: text).objectValue ?? [:]
        return FileAttachment(
            collection: object["collection"]?.stringValue ?? "", id: object["id"]?.stringValue ?? "", field: object["field"]?.stringValue ?? "")
    }
}
