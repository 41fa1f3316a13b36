/// Who may read and write a collection's records: filters of PROTOCOL.md's language whose values may be parameters
/// of the signed-in user (``RuleParameter``). The server enforces them for every role but `admin`; a collection
/// without rules lets every member read, and every writer write, all of its records.
///
/// ```swift
/// let rules = DataRules(
///     read: .or([.condition("assignee", .eq, RuleParameter.userName.value),
///                .condition("region", .in, RuleParameter.claim("regions").value)]),
///     write: .condition("assignee", .eq, RuleParameter.userName.value))
/// ```
public struct DataRules: Codable, Sendable, Hashable {
    /// The records a member may pull, read, verify, be notified of and download files of; `nil`: all.
    public var read: Filter?
    /// The records a writer may create, change or delete (before and after the change, which must also stay
    /// readable); `nil`: all that are readable.
    public var write: Filter?

    /// Rules with these filters.
    public init(read: Filter? = nil, write: Filter? = nil) {
        self.read = read
        self.write = write
    }

    /// True when neither rule is set.
    public var isEmpty: Bool { read == nil && write == nil }

    enum CodingKeys: String, CodingKey, CaseIterable { case read, write }
}

/// A value of a rule's condition that names the signed-in user's data: `{"param": "user.name"}`,
/// `{"param": "user.role"}` or `{"param": "claims.NAME"}`.
public enum RuleParameter: Sendable, Hashable {
    /// The user's name (a JWT's `sub`).
    case userName
    /// The user's role in the project: `reader`, `writer` or `admin`.
    case userRole
    /// One of the user's claims: from the identity provider's token, or set by an operator.
    case claim(String)

    /// Reads `{"param": "..."}`; `nil` for any other value. An unknown parameter name is also `nil` here:
    /// ``name(of:)`` tells them apart.
    public init?(_ value: JSONValue) {
        guard let name = Self.name(of: value) else { return nil }
        switch name {
        case "user.name": self = .userName
        case "user.role": self = .userRole
        default:
            guard name.hasPrefix("claims."), Self.isValidClaimName(String(name.dropFirst("claims.".count))) else { return nil }
            self = .claim(String(name.dropFirst("claims.".count)))
        }
    }

    /// The parameter's name as written in rules: `user.name`, `user.role` or `claims.NAME`.
    public var name: String {
        switch self {
        case .userName: "user.name"
        case .userRole: "user.role"
        case .claim(let claim): "claims.\(claim)"
        }
    }

    /// The parameter as a condition's value: `{"param": "user.name"}`.
    public var value: JSONValue { .object(["param": .string(name)]) }

    /// The text of `{"param": TEXT}`, whether or not it names a known parameter; `nil` for other values.
    public static func name(of value: JSONValue) -> String? {
        guard case .object(let members) = value, members.count == 1, case .string(let name)? = members["param"] else { return nil }
        return name
    }

    /// A claim name: 1 to 128 characters, none of them a control character.
    public static func isValidClaimName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128 && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }
}

extension DataRules {
    /// The rules as PROTOCOL.md's JSON: `{"read": FILTER, "write": FILTER}`, each only when set.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = [:]
        if let read { members["read"] = read.jsonValue }
        if let write { members["write"] = write.jsonValue }
        return .object(members)
    }
}

extension Filter {
    /// The filter as PROTOCOL.md's JSON, the shape its `Codable` conformance reads and writes.
    public var jsonValue: JSONValue {
        switch self {
        case .and(let filters): .object(["and": .array(filters.map(\.jsonValue))])
        case .or(let filters): .object(["or": .array(filters.map(\.jsonValue))])
        case .not(let filter): .object(["not": filter.jsonValue])
        case .condition(let field, let op, let value): .object(["field": .string(field), "op": .string(op.rawValue), "value": value])
        }
    }
}
