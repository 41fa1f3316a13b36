/// The body of `POST .../files`: a new file slot, waiting for its bytes.
///
/// ```swift
/// let request = NewFileRequest(name: "photo.jpg", contentType: "image/jpeg", size: 2_048_311,
///                              attachTo: FileAttachment(collection: "notes", id: "n-1", field: "photo"))
/// ```
public struct NewFileRequest: Codable, Sendable, Hashable {
    /// 1 to 255 bytes of UTF-8 without NUL; kept as text, never a path.
    public var name: String
    /// The MIME type; `application/octet-stream` when `nil`.
    public var contentType: String?
    /// The exact size in bytes.
    public var size: Int64
    /// Lowercase hex SHA-256 the bytes must hash to at `complete`.
    public var sha256: String?
    /// At most 32 labels of 1 to 64 bytes.
    public var tags: [String]?
    /// Readable without a token; `false` when `nil`.
    public var `public`: Bool?
    /// The record field to set when the upload completes.
    public var attachTo: FileAttachment?
    /// Where the file came from, in the app's words: at most 255 bytes without control characters.
    public var source: String?
    /// Who may see it; project-wide when `nil`. A private file cannot be public.
    public var permissions: FilePermissions?

    /// A request with these values.
    public init(
        name: String, contentType: String? = nil, size: Int64, sha256: String? = nil, tags: [String]? = nil, public: Bool? = nil,
        attachTo: FileAttachment? = nil, source: String? = nil, permissions: FilePermissions? = nil
    ) {
        self.name = name
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
        self.tags = tags
        self.public = `public`
        self.attachTo = attachTo
        self.source = source
        self.permissions = permissions
    }
}

/// The body of `PATCH .../files/{id}`: what to change; `nil` leaves it as it is.
public struct FileUpdate: Codable, Sendable, Hashable {
    /// A new name (the same rules as at creation).
    public var name: String?
    /// New tags, replacing the old ones.
    public var tags: [String]?
    /// Readable without a token, or not.
    public var `public`: Bool?
    /// A new source.
    public var source: String?
    /// New permissions, replacing the old ones: the uploader's and admins' to change alone.
    public var permissions: FilePermissions?

    /// A change of these values.
    public init(name: String? = nil, tags: [String]? = nil, public: Bool? = nil, source: String? = nil, permissions: FilePermissions? = nil) {
        self.name = name
        self.tags = tags
        self.public = `public`
        self.source = source
        self.permissions = permissions
    }
}
