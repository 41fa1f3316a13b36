import CairnProtocol
import CairnSQL

/// The fields a collection's rules read, kept beside each record in a small JSON object (`records.rule_data`), so
/// the database evaluates rules without parsing each record's whole data: a pull for a user who reads 1% of a
/// collection then costs about 1% of a full pull. Storage reads a field from there first and falls back to the data
/// (a field missing there: a record written before the rules named it), so `rule_data` only ever speeds things up.
enum RuleFields {
    /// The declared, non-`json` fields the collection's read and write rules compare, by name; none without rules.
    static func names(_ collection: CollectionSchema) -> [String] {
        guard let rules = collection.rules else { return [] }
        var names = Set<String>()
        for rule in [rules.read, rules.write].compactMap({ $0 }) { collect(rule, into: &names) }
        return names.filter { name in collection.field(named: name).map { $0.type != .json } ?? false }.sorted()
    }

    /// The `rule_data` of a record with `data`: its values of `names`, as a JSON object's text; `nil` without names.
    static func text(of data: [String: JSONValue], names: [String]) -> String? {
        guard !names.isEmpty else { return nil }
        var kept: [String: JSONValue] = [:]
        for name in names { if let value = data[name], !value.isNull { kept[name] = value } }
        return JSONValue.object(kept).jsonText()
    }

    /// How storage reads a declared field of `collection` from the JSON column `document`, given how the engine reads
    /// one from any document (`read(field, document)`): a record's own `data` is read through `rule_data` first for
    /// the fields its rules compare, falling back to the data when `rule_data` lacks the value.
    static func reader(
        for collection: CollectionSchema, document: String, _ read: @escaping (FieldSchema, String) -> FieldAccess
    ) -> (FieldSchema) -> FieldAccess {
        let kept = document == "data" ? Set(names(collection)) : []
        return { field in
            let access = read(field, document)
            guard kept.contains(field.name) else { return access }
            let fast = read(field, "rule_data")
            return FieldAccess(scalar: "COALESCE(\(fast.scalar), \(access.scalar))", jsonDocument: access.jsonDocument, jsonPath: access.jsonPath)
        }
    }

    private static func collect(_ filter: Filter, into names: inout Set<String>) {
        switch filter {
        case .and(let filters), .or(let filters): for child in filters { collect(child, into: &names) }
        case .not(let child): collect(child, into: &names)
        case .condition(let field, _, _): names.insert(field)
        }
    }
}
