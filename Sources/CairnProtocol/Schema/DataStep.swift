/// A declared migration step resolved against the schema it applies to, as it changes record data: with the old
/// type of a converted field, so an old app build's records can be converted back. The server migrates stored
/// records and translates old builds' records with it; the SDK migrates its local records with the same steps.
package struct DataStep: Sendable, Hashable {
    /// The collection whose records it changes.
    package var collection: String
    package var kind: Kind

    /// What the step does to a record's data.
    package enum Kind: Sendable, Hashable {
        case rename(from: String, to: String)
        case convert(field: String, from: FieldType, to: FieldType, format: String?)
        case drop(field: String)
        case fill(field: String, value: JSONValue)
    }

    /// The data steps of `migrations`, the steps from `previous` to the schema that declares them (a dropped
    /// collection and a policy change touch no record data).
    package static func resolve(_ migrations: [SchemaMigration], from previous: Schema) -> [DataStep] {
        var types: [String: [String: FieldType]] = [:]
        for collection in previous.collections {
            types[collection.name] = Dictionary(collection.fields.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        }
        var steps: [DataStep] = []
        for migration in migrations {
            let name = migration.collection
            switch migration.step {
            case .rename(let from, let to):
                let type = types[name]?.removeValue(forKey: from)
                types[name]?[to] = type
                steps.append(DataStep(collection: name, kind: .rename(from: from, to: to)))
            case .convert(let field, let type, let format):
                let old = types[name]?[field] ?? .json
                types[name]?[field] = type
                steps.append(DataStep(collection: name, kind: .convert(field: field, from: old, to: type, format: format)))
            case .drop(let field?):
                types[name]?[field] = nil
                steps.append(DataStep(collection: name, kind: .drop(field: field)))
            case .fill(let field, let value):
                steps.append(DataStep(collection: name, kind: .fill(field: field, value: value)))
            case .drop(nil), .policy:
                continue
            }
        }
        return steps
    }

    /// A value a step could not carry into its shape.
    package enum Loss: Sendable, Hashable {
        /// `value` of `field` does not convert to `type`; the field was left out.
        case unconvertible(field: String, value: JSONValue, type: FieldType)
        /// `field`, which the step drops, held a value other than `null`.
        case dropped(field: String)
    }

    /// Brings data to the step's shape: the one place a step changes data, for stored records on the server, for
    /// an old build's incoming changes and for a device's local records. Applying it twice changes nothing more (a
    /// renamed field whose new name holds a value already keeps that value). Returns what the step could not carry
    /// over, for callers that refuse such data rather than lose it.
    @discardableResult
    package func apply(to data: inout [String: JSONValue]) -> Loss? {
        switch kind {
        case .rename(let from, let to):
            if let value = data.removeValue(forKey: from), data[to] == nil { data[to] = value }
        case .convert(let field, let from, let to, let format):
            guard let value = data[field], !value.isNull else { return nil }
            data[field] = ValueConversion.convert(value, from: from, to: to, format: format)
            if data[field] == nil { return .unconvertible(field: field, value: value, type: to) }
        case .drop(let field):
            if let value = data.removeValue(forKey: field), !value.isNull { return .dropped(field: field) }
        case .fill(let field, let value):
            if data[field] == nil || data[field]?.isNull == true { data[field] = value }
        }
        return nil
    }

    /// The name `field` of `collection` has after `steps`: its last rename's new name, or its own.
    package static func currentName(of field: String, in collection: String, after steps: [DataStep]) -> String {
        var name = field
        for step in steps where step.collection == collection {
            if case .rename(let from, let to) = step.kind, name == from { name = to }
        }
        return name
    }

    /// Brings data of the step's shape back to the shape before it, for an app build made for the older schema: a
    /// renamed field gets its old name, a converted one its old type; dropped and filled fields are left as they are.
    package func revert(_ data: inout [String: JSONValue]) {
        switch kind {
        case .rename(let from, let to):
            if let value = data.removeValue(forKey: to) { data[from] = value }
        case .convert(let field, let from, let to, let format):
            guard let value = data[field], !value.isNull else { return }
            data[field] = ValueConversion.convert(value, from: to, to: from, format: format)
        case .drop, .fill:
            return
        }
    }
}
