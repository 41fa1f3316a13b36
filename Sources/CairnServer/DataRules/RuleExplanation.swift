import CairnProtocol

/// Why a user can or cannot read and write one record: the answer of `cairn admin explain` and of
/// `GET /v1/projects/{project}/explain`.
///
/// ```swift
/// let why = try await admin.explain(project: "field", user: "ana", collection: "jobs", id: "j-1")
/// print(why.read.reason)   // "the read rule matches: region in claims.regions ([\"north\"]) holds"
/// ```
public struct RuleExplanation: Codable, Sendable, Hashable {
    /// The user asked about.
    public var user: String
    /// The user's role in the project; `nil` when not a member.
    public var role: Role?
    /// The claims the rules read as `claims.NAME`.
    public var claims: [String: JSONValue]
    /// The collection and record asked about.
    public var collection: String
    public var id: String
    /// The record's version; `nil` when there is no live record with this id.
    public var version: Int64?
    /// Whether the user may read the record, and why.
    public var read: Verdict
    /// Whether the user may write (change or delete) the record, and why.
    public var write: Verdict

    /// One rule's verdict on the record.
    public struct Verdict: Codable, Sendable, Hashable {
        /// True when the user may.
        public var allowed: Bool
        /// The rule as the schema states it, with its parameters; `nil` when the collection has none.
        public var rule: Filter?
        /// The rule with the user's values in place of its parameters, as the database evaluates it.
        public var bound: Filter?
        /// What decides, in words.
        public var reason: String
        /// Each condition of the rule, with the user's value and whether it holds for the record; the deciding ones
        /// are marked.
        public var conditions: [Condition]
    }

    /// One condition of a rule.
    public struct Condition: Codable, Sendable, Hashable {
        /// Where it sits in the rule: `read`, `read.or[1]`, `write.and[0].not`.
        public var path: String
        /// The condition as written, parameters included.
        public var condition: Filter
        /// The value it compares with once the user's values are in place (`{"or": []}`, matching nothing, stands
        /// for a missing claim).
        public var bound: Filter
        /// Whether it holds for the record.
        public var matches: Bool
        /// Whether it decides the rule's verdict.
        public var decides: Bool
    }
}
