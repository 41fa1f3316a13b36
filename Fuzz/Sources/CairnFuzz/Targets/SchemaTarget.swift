import CairnProtocol
import Foundation

/// `schema`: schema documents with rules and migrations. The strict-key check and validation never crash; a schema
/// that decodes encodes to text that decodes and encodes to the same text (its rules and migrations
/// read back equal through their `jsonValue` forms), its canonical text is stable, and a document that passes the key check re-encodes to one that passes it.
enum SchemaTarget {
    static func run(_ bytes: [UInt8]) {
        guard let document = try? JSONValue(parsing: bytes) else { return }
        let keysPass = (try? SchemaKeys.check(document)) != nil
        guard let schema = try? JSONValueDecoder().decode(Schema.self, from: document) else { return }
        _ = try? schema.validate()
        for collection in schema.collections {
            for name in collection.fields.map(\.name) + ["id"] { _ = collection.field(named: name) }
            if let rules = collection.rules {
                require((try? JSONValueDecoder().decode(DataRules.self, from: rules.jsonValue)) == rules, "rules do not read back from their jsonValue: \(show(bytes))")
            }
        }
        for migration in schema.migrations {
            require((try? JSONValueDecoder().decode(SchemaMigration.self, from: migration.jsonValue)) == migration,
                    "a migration does not read back from its jsonValue: \(show(bytes))")
        }
        guard let encoded = try? CairnJSON.encode(schema) else { return require(false, "a decoded schema does not encode: \(show(bytes))") }
        guard let again = try? CairnJSON.decode(Schema.self, from: encoded) else {
            return require(false, "\(show(bytes)) encodes as \(show(encoded)), which does not decode")
        }
        // Everything but JSON values reads back equal; those may change kind once, as Foundation's JSONEncoder writes
        // 2.0 as 2 (a fill value, a rule's value): the text is a fixpoint from the first encoding on.
        require(again.version == schema.version && again.number == schema.number && again.minimumSchemaVersion == schema.minimumSchemaVersion
                && again.collections.map(\.name) == schema.collections.map(\.name) && again.collections.map(\.fields) == schema.collections.map(\.fields)
                && again.collections.map(\.indexes) == schema.collections.map(\.indexes) && again.collections.map(\.table) == schema.collections.map(\.table)
                && again.collections.map(\.conflictPolicy) == schema.collections.map(\.conflictPolicy)
                && again.collections.map { $0.rules == nil } == schema.collections.map { $0.rules == nil }
                && again.migrations.map(\.collection) == schema.migrations.map(\.collection) && again.actions == schema.actions,
                "\(show(bytes)) encodes as \(show(encoded)), which decodes to another schema")
        require((try? CairnJSON.encode(again)) == encoded, "\(show(bytes)) encodes as \(show(encoded)), which decodes to another schema")
        let canonical = schema.canonicalText
        require((try? JSONValue(parsing: canonical))?.jsonText() == canonical, "the canonical text of \(show(bytes)) is not canonical JSON")
        if keysPass, let reencoded = try? JSONValue(parsing: encoded) {
            require((try? SchemaKeys.check(reencoded)) != nil, "\(show(bytes)) passes the key check, its encoding \(show(encoded)) does not")
        }
    }
}
