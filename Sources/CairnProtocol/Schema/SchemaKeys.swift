/// The keys a schema document may hold, level by level, read from the schema types' own coding keys, and the check
/// that refuses any other: a typo such as `"confictPolicy"` or `"requird"` would otherwise be dropped without a word,
/// and an operator would believe a rule is in force that is not. The server's `PUT .../schema`, `cairn admin
/// set-schema` and `cairn admin schema diff` run it; clients reading a served schema do not (a newer server may add
/// keys).
///
/// ```swift
/// try SchemaKeys.check(try JSONValue(parsing: Array(data)))
/// // validation_failed: unknown key "confictPolicy" in collections[0]: did you mean "conflictPolicy"?
/// ```
public enum SchemaKeys {
    static let schema = names(Schema.CodingKeys.self)
    static let collection = names(CollectionSchema.CodingKeys.self)
    static let field = names(FieldSchema.CodingKeys.self)
    static let rules = names(DataRules.CodingKeys.self)
    static let filter = names(Filter.CodingKeys.self)
    static let migration = names(SchemaMigration.CodingKeys.self)
    static let migrationSteps: [String: Set<String>] = [
        "rename": names(SchemaMigration.Rename.CodingKeys.self), "convert": names(SchemaMigration.Convert.CodingKeys.self),
        "drop": names(SchemaMigration.Drop.CodingKeys.self), "fill": names(SchemaMigration.Fill.CodingKeys.self),
        "policy": names(SchemaMigration.Policy.CodingKeys.self),
    ]
    static let action = names(ActionSchema.CodingKeys.self)

    private static func names<Key: CodingKey & CaseIterable>(_: Key.Type) -> Set<String> { Set(Key.allCases.map(\.stringValue)) }

    /// Refuses a key the schema's level does not know anywhere in `document` (the schema, its collections, fields,
    /// rules and their filters, migrations and actions): `validation_failed` with `details.field` the key's path and
    /// `details.suggestion` the nearest known key, when one is near.
    public static func check(_ document: JSONValue) throws(ErrorBody) {
        try object(document, "", allowed: schema)
        for (index, item) in (document.objectValue?["collections"]?.arrayValue ?? []).enumerated() {
            let path = "collections[\(index)]"
            try object(item, path, allowed: collection)
            for (position, entry) in (item.objectValue?["fields"]?.arrayValue ?? []).enumerated() {
                try object(entry, "\(path).fields[\(position)]", allowed: field)
            }
            if let declared = item.objectValue?["rules"] {
                try object(declared, "\(path).rules", allowed: rules)
                for key in ["read", "write"] {
                    if let filter = declared.objectValue?[key] { try self.filter(filter, "\(path).rules.\(key)") }
                }
            }
        }
        for (index, item) in (document.objectValue?["migrations"]?.arrayValue ?? []).enumerated() {
            let path = "migrations[\(index)]"
            try object(item, path, allowed: migration)
            for (step, keys) in migrationSteps {
                if let body = item.objectValue?[step] { try object(body, "\(path).\(step)", allowed: keys) }
            }
        }
        for (index, item) in (document.objectValue?["actions"]?.arrayValue ?? []).enumerated() {
            try object(item, "actions[\(index)]", allowed: action)
        }
    }

    /// A filter's keys, through its groups; values are data and are not checked.
    private static func filter(_ value: JSONValue, _ path: String) throws(ErrorBody) {
        try object(value, path, allowed: filter)
        for key in ["and", "or"] {
            for (index, child) in (value.objectValue?[key]?.arrayValue ?? []).enumerated() {
                try self.filter(child, "\(path).\(key)[\(index)]")
            }
        }
        if let inner = value.objectValue?["not"] { try self.filter(inner, "\(path).not") }
    }

    /// The first key of the object `value` that `allowed` lacks, refused; nothing for a value that is not an object
    /// (the decoder says what is wrong with it).
    private static func object(_ value: JSONValue, _ path: String, allowed: Set<String>) throws(ErrorBody) {
        guard let members = value.objectValue else { return }
        for key in members.keys.sorted() where !allowed.contains(key) {
            let place = path.isEmpty ? key : "\(path).\(key)"
            var message = "unknown key \"\(key)\"" + (path.isEmpty ? " in the schema" : " in \(path)")
            var details: [String: JSONValue] = ["field": .string(place)]
            if let near = nearest(key, in: allowed) {
                message += ": did you mean \"\(near)\"?"
                details["suggestion"] = .string(near)
            } else {
                message += "; known keys: " + allowed.sorted().joined(separator: ", ")
            }
            throw ErrorBody(code: .validationFailed, message: message, details: details)
        }
    }

    /// The known key nearest `key` by edit distance (letters compared without case), when near enough to be a typo.
    static func nearest(_ key: String, in known: Set<String>) -> String? {
        let typed = Array(key.lowercased())
        let ranked = known.map { ($0, distance(typed, Array($0.lowercased()))) }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
        guard let best = ranked.first, best.1 <= max(2, typed.count / 3) else { return nil }
        return best.0
    }

    /// The Levenshtein distance between two strings' characters.
    private static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        for (i, left) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, right) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
