/// A comparison of a filter condition; the raw value is PROTOCOL.md's `op`.
///
/// `eq`, `ne` (also matches null or missing), `lt`, `lte`, `gt`, `gte` (never match null or missing), `in` (value is an
/// array of at most 1000 values), `like` (SQL LIKE with `%` and `_`, ASCII case-insensitive, no escape), `contains` (the
/// field is an array holding the value) and `exists` (value `true` or `false`).
public enum FilterOperator: String, Codable, Sendable, CaseIterable {
    case eq, ne, lt, lte, gt, gte, `in`, like, contains, exists
}

/// PROTOCOL.md's filter language, used by pulls' `where` on the server and by local queries in the SDK.
///
/// ```swift
/// let filter: Filter = .and([
///     .condition("done", .eq, false),
///     .or([.condition("title", .like, "%milk%"), .condition("due", .lt, "2026-12-01T00:00:00Z")])])
/// ```
public indirect enum Filter: Sendable, Hashable {
    /// Matches when every filter matches; `and([])` matches everything.
    case and([Filter])
    /// Matches when any filter matches; `or([])` matches nothing.
    case or([Filter])
    /// Matches exactly the records the filter does not match (a condition on a missing field does not match, so its
    /// `not` does).
    case not(Filter)
    /// Compares one field with a value.
    case condition(field: String, op: FilterOperator, value: JSONValue)

    /// A condition on `field`.
    public static func condition(_ field: String, _ op: FilterOperator, _ value: JSONValue) -> Filter {
        .condition(field: field, op: op, value: value)
    }
}

extension Filter: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable { case and, or, not, field, op, value }

    /// Decodes PROTOCOL.md's filter JSON: exactly `{"and"}`, `{"or"}`, `{"not"}` or `{"field", "op", "value"}` (a missing `value` is
    /// `null`); other key sets and unknown ops are a `DecodingError` that lists the valid forms.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let keys = Set(container.allKeys.map(\.stringValue))
        if keys == ["and"] {
            self = .and(try container.decode([Filter].self, forKey: .and))
        } else if keys == ["or"] {
            self = .or(try container.decode([Filter].self, forKey: .or))
        } else if keys == ["not"] {
            self = .not(try container.decode(Filter.self, forKey: .not))
        } else if keys == ["field", "op", "value"] || keys == ["field", "op"] {
            let op = try container.decode(String.self, forKey: .op)
            guard let filterOperator = FilterOperator(rawValue: op) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .op, in: container,
                    debugDescription: "unknown op \"\(op)\"; use one of \(FilterOperator.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self = .condition(
                field: try container.decode(String.self, forKey: .field), op: filterOperator,
                value: try container.decodeIfPresent(JSONValue.self, forKey: .value) ?? .null)
        } else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath,
                      debugDescription: "a filter is {\"and\": [...]}, {\"or\": [...]}, {\"not\": {...}} or {\"field\", \"op\", \"value\"}"))
        }
    }

    /// Encodes PROTOCOL.md's filter JSON; a condition always writes `value`, as `null` when it is ``JSONValue/null``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .and(let filters): try container.encode(filters, forKey: .and)
        case .or(let filters): try container.encode(filters, forKey: .or)
        case .not(let filter): try container.encode(filter, forKey: .not)
        case .condition(let field, let op, let value):
            try container.encode(field, forKey: .field)
            try container.encode(op, forKey: .op)
            try container.encode(value, forKey: .value)
        }
    }
}
