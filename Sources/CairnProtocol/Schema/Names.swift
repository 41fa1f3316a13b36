/// The naming rules of PROTOCOL.md for ids, projects and collections.
public enum Names {
    /// Ids: 1 to 128 characters from `[A-Za-z0-9_.:-]`.
    public static func isValidID(_ id: String) -> Bool {
        let utf8 = id.utf8
        guard (1...128).contains(utf8.count) else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"),
                UInt8(ascii: "-"):
                return true
            default: return false
            }
        }
    }

    /// Project names: `^[a-z][a-z0-9_]{0,62}$`.
    public static func isValidProjectName(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard (1...63).contains(utf8.count), (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(utf8[0]) else { return false }
        return utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
    }

    /// Collection names: a valid project name that does not start with `cairn_`.
    public static func isValidCollectionName(_ name: String) -> Bool {
        isValidProjectName(name) && !name.hasPrefix("cairn_")
    }

    /// Field names: 1 to 63 characters from `[A-Za-z0-9_]`, not starting with a digit, not `id`, `version`,
    /// `deleted` or `rowid`, and not starting with `cairn_` (local stores use that prefix for their own columns).
    /// Field names become column names in local stores, so they are kept SQL-safe.
    public static func isValidFieldName(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard (1...63).contains(utf8.count), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(utf8[0]) else { return false }
        guard !reservedFieldNames.contains(name.lowercased()), !name.lowercased().hasPrefix("cairn_") else { return false }
        return utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }

    /// Names a field may not take: they are the record envelope's own.
    public static let reservedFieldNames: Set<String> = ["id", "version", "deleted", "rowid"]
}
