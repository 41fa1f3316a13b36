import CairnProtocol

/// The signed-in user a project's data rules are evaluated for: the values of ``RuleParameter``s.
///
/// ```swift
/// let nurse = RuleSubject(user: "ana", role: .writer, claims: ["ward": "B2"])
/// nurse.value(of: .claim("ward"))   // "B2"
/// ```
public struct RuleSubject: Sendable, Hashable {
    /// The user's name (`user.name`).
    public var user: String
    /// The user's role in the project (`user.role`); `admin` is not bound by rules.
    public var role: Role
    /// The user's claims (`claims.NAME`): from the identity provider's token, or set by an operator.
    public var claims: [String: JSONValue]

    /// A subject with these values.
    public init(user: String, role: Role, claims: [String: JSONValue] = [:]) {
        self.user = user
        self.role = role
        self.claims = claims
    }

    /// Whether rules bind this user: every role but `admin` (``Role/isBoundByRules``).
    public var isBound: Bool { role.isBoundByRules }

    /// The parameter's value for this user; `nil` for a claim the user does not have (or has as `null`).
    public func value(of parameter: RuleParameter) -> JSONValue? {
        switch parameter {
        case .userName: return .string(user)
        case .userRole: return .string(role.rawValue)
        case .claim(let name):
            guard let value = claims[name], !value.isNull else { return nil }
            return value
        }
    }
}
