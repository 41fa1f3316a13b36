import CairnProtocol

/// The checks of file metadata a client sends: names, tags, content types, hashes and attachment targets.
/// Each failure is `422 validation_failed` naming the field.
enum FileRules {
    static let maximumNameBytes = 255
    static let maximumTags = 32
    static let maximumTagBytes = 64
    static let defaultContentType = "application/octet-stream"

    /// A name of 1 to 255 bytes without NUL or other control characters. Slashes and dots are text: names never
    /// become paths.
    static func name(_ name: String) throws -> String {
        guard !name.isEmpty, name.utf8.count <= maximumNameBytes else {
            throw ErrorBody.validation("name must be 1 to \(maximumNameBytes) bytes", field: "name")
        }
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw ErrorBody.validation("name may not hold control characters (NUL, line breaks)", field: "name")
        }
        return name
    }

    /// At most 32 distinct tags of 1 to 64 bytes without control characters, in the order given.
    static func tags(_ tags: [String]) throws -> [String] {
        guard tags.count <= maximumTags else { throw ErrorBody.validation("at most \(maximumTags) tags", field: "tags") }
        var seen = Set<String>()
        var kept: [String] = []
        for tag in tags {
            guard !tag.isEmpty, tag.utf8.count <= maximumTagBytes, !tag.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else { throw ErrorBody.validation("a tag is 1 to \(maximumTagBytes) bytes without control characters", field: "tags") }
            if seen.insert(tag).inserted { kept.append(tag) }
        }
        return kept
    }

    /// A source of at most 255 bytes without control characters (`nil`: not said).
    static func source(_ source: String?) throws -> String? {
        guard let source else { return nil }
        guard !source.isEmpty, source.utf8.count <= maximumNameBytes, !source.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { throw ErrorBody.validation("source is 1 to \(maximumNameBytes) bytes without control characters", field: "source") }
        return source
    }

    /// The most users a private file is shared with.
    static let maximumSharedUsers = 100

    /// User names to share with: 1 to 1024 bytes without control characters each, repeats dropped.
    static func users(_ users: [String], field: String) throws -> [String] {
        var seen = Set<String>()
        var kept: [String] = []
        for user in users {
            guard !user.isEmpty, user.utf8.count <= 1024, !user.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw ErrorBody.validation("a user name is 1 to 1024 bytes without control characters", field: field)
            }
            if seen.insert(user).inserted { kept.append(user) }
        }
        guard kept.count <= maximumSharedUsers else {
            throw ErrorBody.validation("a file is shared with at most \(maximumSharedUsers) users", field: field)
        }
        return kept
    }

    /// Checked permissions, their users cleaned (``users(_:field:)``).
    static func permissions(_ permissions: FilePermissions) throws -> FilePermissions {
        FilePermissions(access: permissions.access, sharedWith: try users(permissions.sharedWith, field: "permissions.sharedWith"))
    }

    /// A private file is never public: `validation_failed` naming `public` otherwise.
    static func checkVisibility(isPublic: Bool, _ permissions: FilePermissions) throws {
        if isPublic, permissions.access == .private {
            throw ErrorBody.validation("a private file cannot be public: make it project-wide first, or not public", field: "public")
        }
    }

    /// A MIME type such as `image/jpeg; charset=binary`: visible ASCII and spaces with a slash, at most 255 bytes
    /// (it is answered as a header).
    static func contentType(_ type: String?) throws -> String {
        guard let type else { return defaultContentType }
        let bytes = type.utf8
        guard !bytes.isEmpty, bytes.count <= 255, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }), type.contains("/"),
            bytes.first != 0x20
        else { throw ErrorBody.validation("contentType must be a MIME type such as image/jpeg", field: "contentType") }
        return type
    }

    /// 64 hex digits, answered lowercase.
    static func sha256(_ hash: String?) throws -> String? {
        guard let hash else { return nil }
        guard hash.utf8.count == 64, hash.utf8.allSatisfy({ Hex.isDigit($0) }) else {
            throw ErrorBody.validation("sha256 must be 64 hex digits", field: "sha256")
        }
        return hash.lowercased()
    }

    /// A target that names a `file` field of a collection in `schema`, and a valid record id.
    static func attachment(_ target: FileAttachment?, schema: Schema) throws -> FileAttachment? {
        guard let target else { return nil }
        guard let collection = schema.collection(named: target.collection) else {
            throw ErrorBody.validation("attachTo.collection \"\(target.collection)\" is not in the schema", field: "attachTo.collection")
        }
        guard Names.isValidID(target.id) else {
            throw ErrorBody.validation("attachTo.id is not a valid record id", field: "attachTo.id")
        }
        guard collection.fields.contains(where: { $0.name == target.field && $0.type == .file }) else {
            throw ErrorBody.validation(
                "attachTo.field \"\(target.field)\" is not a file field of \(collection.name)", field: "attachTo.field")
        }
        return target
    }
}
