import CairnProtocol

/// A path inside a `json` field, written `field.key.key` (`address.city`): filters, sorts and local indexes may name
/// one where they name a field. The value there compares as a `json` field's does (by JSON kind).
///
/// Keys are letters, digits and `_`, so a path is spelled into SQL as it is, by every dialect.
///
/// ```swift
/// JSONFieldPath("address.city", in: visits)   // field "address", keys ["city"]
/// ```
package struct JSONFieldPath: Sendable, Hashable {
    /// The `json` field the path starts from.
    package let field: FieldSchema
    /// The keys followed inside it, at least one.
    package let keys: [String]

    /// The path `name` names in `collection`: nil when `name` has no dot (a plain field name).
    /// - Throws: `validation_failed` naming `name` when it starts with no `json` field of the collection or a key
    ///   is empty or holds other characters than letters, digits and `_`.
    package init?(_ name: String, in collection: CollectionSchema) throws(ErrorBody) {
        guard let dot = name.firstIndex(of: ".") else { return nil }
        let root = String(name[..<dot])
        guard let field = collection.field(named: root), field.type == .json else {
            throw .validation("\"\(name)\" is a path, and \"\(root)\" is not a json field of \(collection.name)", field: name)
        }
        let keys = name[name.index(after: dot)...].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard keys.allSatisfy(Self.isKey) else {
            throw .validation("\"\(name)\": a path's keys are letters, digits and _, joined by dots", field: name)
        }
        self.field = field
        self.keys = keys
    }

    /// True for a key a path may follow.
    static func isKey(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.count <= 64 && key.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
        }
    }

    /// The path's name, `field.key.key`.
    package var name: String { ([field.name] + keys).joined(separator: ".") }

    /// The value compared, as the `json` field's type.
    var asField: FieldSchema { FieldSchema(name: name, type: .json) }
}
