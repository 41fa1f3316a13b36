import CairnProtocol

/// One difference between a project's schema and a new one, as ``SchemaClassifier`` finds it.
public struct SchemaChange: Sendable, Hashable, CustomStringConvertible {
    /// What changed: `add-collection`, `add-field`, `add-index`, `drop-index`, `looser-policy`, `looser-field`,
    /// `rules`, or a breaking kind: `drop-collection`, `drop-field`, `retype-field`, `required-field`,
    /// `tighter-policy`; a declared step is `rename`, `convert`, `drop`, `fill` or `policy`.
    public var kind: String
    /// The collection it concerns.
    public var collection: String
    /// The field, when it concerns one.
    public var field: String?
    /// Whether old app builds could lose data or be refused by it without a declared step.
    public var isBreaking: Bool
    /// Whether a declared migration step covers it (always true for the steps themselves).
    public var isDeclared: Bool
    /// What it is, in words, with what to declare when it is breaking and not declared.
    public var message: String

    /// The change in words.
    public var description: String { message }
}

/// What setting a new schema would change, and whether the change is breaking.
///
/// ```swift
/// let diff = try SchemaClassifier.diff(from: current, to: proposed)
/// if !diff.missing.isEmpty { print(diff.missing.map(\.message)) }
/// ```
public struct SchemaDiff: Sendable, Hashable {
    /// Every change, additive ones and declared steps included, in schema order.
    public var changes: [SchemaChange]

    /// Whether any change is breaking (declared or not): the schema then carries migration steps.
    public var isBreaking: Bool { changes.contains { $0.isBreaking } }
    /// The breaking changes no declared step covers: a schema with any is refused.
    public var missing: [SchemaChange] { changes.filter { $0.isBreaking && !$0.isDeclared } }

    /// The refusal of a schema with ``missing`` changes: `incompatible_schema` naming each, with `details.missing`.
    var refusal: ErrorBody? {
        let missing = missing
        guard !missing.isEmpty else { return nil }
        return ErrorBody(
            code: .incompatibleSchema,
            message: "this schema change is breaking and declares no migration for: " + missing.map(\.message).joined(separator: "; "),
            details: [
                "missing": .array(missing.map { change in
                    var members: [String: JSONValue] = ["kind": .string(change.kind), "collection": .string(change.collection)]
                    if let field = change.field { members["field"] = .string(field) }
                    return .object(members)
                }),
                "collection": .string(missing[0].collection),
            ].merging(missing[0].field.map { ["field": .string($0)] } ?? [:]) { first, _ in first })
    }
}
