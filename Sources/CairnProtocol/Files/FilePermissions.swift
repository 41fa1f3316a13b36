/// Who may see a file beyond what its project's roles and data rules allow (HAT's per-file permissions).
///
/// - ``FileAccess/project``: as every file before permissions existed: the project's readers see it (within their
///   data rules), its writers change it.
/// - ``FileAccess/private``: only the uploader, the project's admins and the users in ``sharedWith`` see it; only the
///   uploader and admins change it. A private file is never public.
///
/// ```swift
/// let permissions = FilePermissions(access: .private, sharedWith: ["ana"])
/// ```
public struct FilePermissions: Codable, Sendable, Hashable {
    /// Project-wide or private.
    public var access: FileAccess
    /// The users who may also read a private file (download, metadata, search); ignored for a project-wide one.
    public var sharedWith: [String]

    /// Permissions of `access`, shared with `sharedWith`.
    public init(access: FileAccess = .project, sharedWith: [String] = []) {
        self.access = access
        self.sharedWith = sharedWith
    }

    /// Project-wide: every file created without permissions, and every file stored before they existed.
    public static let project = FilePermissions()

    /// Decodes permissions; an absent `access` reads as `project`, absent `sharedWith` as none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        access = try container.decodeIfPresent(FileAccess.self, forKey: .access) ?? .project
        sharedWith = try container.decodeIfPresent([String].self, forKey: .sharedWith) ?? []
    }
}

/// Whether a file is seen project-wide or kept private (``FilePermissions``).
public enum FileAccess: String, Codable, Sendable, Hashable, CaseIterable {
    /// The project's readers see it; its writers change it.
    case project
    /// The uploader, admins and the users it is shared with see it; the uploader and admins change it.
    case `private`
}

/// The body of `POST .../files/{id}/share` and `.../unshare`: the users to add to or remove from a private file's
/// ``FilePermissions/sharedWith``.
public struct FileShareRequest: Codable, Sendable, Hashable {
    /// User names.
    public var users: [String]

    /// A request naming `users`.
    public init(users: [String]) { self.users = users }
}
