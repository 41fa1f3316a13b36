/// One declared step of a breaking schema change, named beside the schema's collections in `migrations`:
///
/// ```json
/// {"collection": "jobs", "rename": {"from": "score", "to": "rating"}}
/// {"collection": "jobs", "convert": {"field": "count", "to": "number"}}
/// {"collection": "jobs", "drop": {"field": "legacy"}}
/// {"collection": "jobs", "fill": {"field": "priority", "value": 0}}
/// ```
///
/// `drop` without a `field` drops the whole collection; `policy` accepts a tighter conflict policy. The server applies
/// the steps to stored records and, for builds of the app made for an older schema, translates their records.
public struct SchemaMigration: Codable, Sendable, Hashable {
    /// The collection the step changes, as named in the previous schema.
    public var collection: String
    /// What the step does.
    public var step: Step

    /// What one migration step does.
    public enum Step: Sendable, Hashable {
        /// Renames field `from` to `to`, keeping its values.
        case rename(from: String, to: String)
        /// Converts the values of `field` to the type `to`; `format` reads a string as a `datetime` (such as
        /// `yyyy-MM-dd`, read in UTC).
        case convert(field: String, to: FieldType, format: String?)
        /// Drops `field`, or the whole collection when `nil`.
        case drop(field: String?)
        /// Sets `field` to `value` in every record that lacks it (a new required field).
        case fill(field: String, value: JSONValue)
        /// Accepts a tighter conflict policy for the collection.
        case policy(ConflictPolicy)
    }

    /// A step of `collection`: `SchemaMigration(collection: "jobs", step: .rename(from: "score", to: "rating"))`.
    public init(collection: String, step: Step) {
        self.collection = collection
        self.step = step
    }

    /// The field the step names (the old name of a rename), if any.
    public var field: String? {
        switch step {
        case .rename(let from, _): return from
        case .convert(let field, _, _), .fill(let field, _): return field
        case .drop(let field): return field
        case .policy: return nil
        }
    }

    /// The step as its JSON object, for messages and documents.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["collection": .string(collection)]
        switch step {
        case .rename(let from, let to): members["rename"] = .object(["from": .string(from), "to": .string(to)])
        case .convert(let field, let type, let format):
            var convert: [String: JSONValue] = ["field": .string(field), "to": .string(type.rawValue)]
            if let format { convert["format"] = .string(format) }
            members["convert"] = .object(convert)
        case .drop(let field): members["drop"] = .object(field.map { ["field": .string($0)] } ?? [:])
        case .fill(let field, let value): members["fill"] = .object(["field": .string(field), "value": value])
        case .policy(let policy): members["policy"] = .object(["to": .string(policy.rawValue)])
        }
        return .object(members)
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case collection, rename, convert, drop, fill, policy }
    struct Rename: Codable {
        var from: String
        var to: String
        enum CodingKeys: String, CodingKey, CaseIterable { case from, to }
    }
    struct Convert: Codable {
        var field: String
        var to: FieldType
        var format: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case field, to, format }
    }
    struct Drop: Codable {
        var field: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case field }
    }
    struct Fill: Codable {
        var field: String
        var value: JSONValue
        enum CodingKeys: String, CodingKey, CaseIterable { case field, value }
    }
    struct Policy: Codable {
        var to: ConflictPolicy
        enum CodingKeys: String, CodingKey, CaseIterable { case to }
    }

    /// Decodes a step object: `collection` and exactly one of `rename`, `convert`, `drop`, `fill`, `policy`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        collection = try container.decode(String.self, forKey: .collection)
        var steps: [Step] = []
        if let rename = try container.decodeIfPresent(Rename.self, forKey: .rename) { steps.append(.rename(from: rename.from, to: rename.to)) }
        if let convert = try container.decodeIfPresent(Convert.self, forKey: .convert) {
            steps.append(.convert(field: convert.field, to: convert.to, format: convert.format))
        }
        if let drop = try container.decodeIfPresent(Drop.self, forKey: .drop) { steps.append(.drop(field: drop.field)) }
        if let fill = try container.decodeIfPresent(Fill.self, forKey: .fill) { steps.append(.fill(field: fill.field, value: fill.value)) }
        if let policy = try container.decodeIfPresent(Policy.self, forKey: .policy) { steps.append(.policy(policy.to)) }
        guard steps.count == 1, let step = steps.first else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: container.codingPath, debugDescription: "a migration names exactly one of rename, convert, drop, fill, policy"))
        }
        self.step = step
    }

    /// Encodes the step as its JSON object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(collection, forKey: .collection)
        switch step {
        case .rename(let from, let to): try container.encode(Rename(from: from, to: to), forKey: .rename)
        case .convert(let field, let type, let format): try container.encode(Convert(field: field, to: type, format: format), forKey: .convert)
        case .drop(let field): try container.encode(Drop(field: field), forKey: .drop)
        case .fill(let field, let value): try container.encode(Fill(field: field, value: value), forKey: .fill)
        case .policy(let policy): try container.encode(Policy(to: policy), forKey: .policy)
        }
    }
}
