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

    /// Brings stored data to the step's shape; applying it twice changes nothing more (a renamed field whose new
    /// name holds a value already keeps that value).
    package func apply(to data: inout [String: JSONValue]) {
        switch kind {
        case .rename(let from, let to):
            if let value = data.removeValue(forKey: from), data[to] == nil { data[to] = value }
        case .convert(let field, let from, let to, let format):
            guard let value = data[field], !value.isNull else { return }
            data[field] = ValueConversion.convert(value, from: from, to: to, format: format)
        case .drop(let field):
            data[field] = nil
        case .fill(let field, let value):
            if data[field] == nil || data[field]?.isNull == true { data[field] = value }
        }
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
