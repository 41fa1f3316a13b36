import CairnProtocol

/// A searchable field of a ``JSONCache``: a top-level member of the cached entries, kept in a typed column so that
/// filters and sorting can use it.
///
/// ```swift
/// let products = try client.jsonCache(name: "products", fields: [.string("sku"), .number("price"), .boolean("active")])
/// ```
public struct CacheField: Sendable, Hashable, Codable {
    /// The entries' top-level member.
    public var name: String
    /// Its type: `string`, `integer`, `number`, `boolean` or `datetime`.
    public var type: FieldType

    /// A field of `type`; `json` and `file` are refused when the cache is opened.
    public init(_ name: String, _ type: FieldType) {
        self.name = name
        self.type = type
    }

    /// A string field (compared by Unicode code point; `like` ignores ASCII case).
    public static func string(_ name: String) -> CacheField { CacheField(name, .string) }
    /// An integer field (compares with numbers as a number).
    public static func integer(_ name: String) -> CacheField { CacheField(name, .integer) }
    /// A number field.
    public static func number(_ name: String) -> CacheField { CacheField(name, .number) }
    /// A boolean field (`eq`, `ne` and `in` only).
    public static func boolean(_ name: String) -> CacheField { CacheField(name, .boolean) }
    /// An RFC 3339 date-time field, compared by instant.
    public static func datetime(_ name: String) -> CacheField { CacheField(name, .datetime) }

    /// The types a cache can search.
    static let searchableTypes: Set<FieldType> = [.string, .integer, .number, .boolean, .datetime]

    /// The column value of this field in `entry`: `NULL` when the member is missing, null, or of another type (the
    /// entry is kept whole, but is not found by this field).
    func columnValue(in entry: [String: JSONValue]) -> JSONValue {
        guard let value = entry[name] else { return .null }
        switch (type, value) {
        case (.string, .string), (.integer, .integer), (.integer, .number), (.number, .integer), (.number, .number), (.boolean, .bool):
            return value
        case (.datetime, .string(let text)) where RFC3339.isValid(text):
            return value
        default:
            return .null
        }
    }
}
