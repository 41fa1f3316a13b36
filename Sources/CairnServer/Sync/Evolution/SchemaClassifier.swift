import CairnProtocol

/// Classifies a schema change when it is set: additive (new collections, optional fields, indexes, looser policies,
/// rules) or breaking (a dropped, renamed or retyped field, a dropped collection, a new required field, a tighter
/// conflict policy), and checks that the new schema's declared ``SchemaMigration`` steps fit the old schema and cover
/// every breaking change. The one place schema changes are judged.
enum SchemaClassifier {
    /// The changes from `old` to `new`. Throws `validation_failed` naming a step that does not fit (a rename of a
    /// field the collection does not have, a step of an unknown collection).
    static func diff(from old: Schema, to new: Schema) throws(ErrorBody) -> SchemaDiff {
        var working = old
        var filled = Set<String>()
        var changes: [SchemaChange] = []
        for (index, step) in new.migrations.enumerated() {
            let place = "migrations[\(index)]"
            guard let position = working.collections.firstIndex(where: { $0.name == step.collection }) else {
                throw .validation("\(place) names collection \"\(step.collection)\", which the current schema does not have", field: place)
            }
            var collection = working.collections[position]
            let name = collection.name
            func requireField(_ field: String) throws(ErrorBody) -> Int {
                guard let at = collection.fields.firstIndex(where: { $0.name == field }) else {
                    throw .validation("\(place) names field \"\(name).\(field)\", which the current schema does not have", field: place)
                }
                return at
            }
            switch step.step {
            case .rename(let from, let to):
                let at = try requireField(from)
                guard Names.isValidFieldName(to), collection.field(named: to) == nil else {
                    throw .validation("\(place) renames \"\(name).\(from)\" to \"\(to)\", which is taken or not a valid field name", field: place)
                }
                collection.fields[at].name = to
                collection.indexes = collection.indexes.map { $0.map { $0 == from ? to : $0 } }
                changes.append(.declared("rename", name, from, "field \(name).\(from) renamed to \(to)"))
            case .convert(let field, let type, let format):
                let at = try requireField(field)
                guard ValueConversion.converts(from: collection.fields[at].type, to: type, format: format) else {
                    throw .validation(
                        "\(place) cannot convert \"\(name).\(field)\" from \(collection.fields[at].type.rawValue) to \(type.rawValue)"
                            + (type == .datetime && collection.fields[at].type == .string && format == nil ? " without a format" : ""),
                        field: place)
                }
                changes.append(.declared("convert", name, field, "field \(name).\(field) converted from \(collection.fields[at].type.rawValue) to \(type.rawValue)"))
                collection.fields[at].type = type
            case .drop(let field?):
                let at = try requireField(field)
                collection.fields.remove(at: at)
                collection.indexes.removeAll { $0.contains(field) }
                changes.append(.declared("drop", name, field, "field \(name).\(field) dropped"))
            case .drop(nil):
                working.collections.remove(at: position)
                changes.append(.declared("drop", name, nil, "collection \(name) dropped"))
                continue
            case .fill(let field, let value):
                guard let target = new.collection(named: name)?.field(named: field) else {
                    throw .validation("\(place) fills \"\(name).\(field)\", which the new schema does not declare", field: place)
                }
                guard !value.isNull, target.type.accepts(value) else {
                    throw .validation("\(place) fills \"\(name).\(field)\" with a value that is not \(target.type.article)", field: place)
                }
                filled.insert("\(name).\(field)")
                changes.append(.declared("fill", name, field, "field \(name).\(field) filled with \(value.jsonText()) where absent"))
            case .policy(let policy):
                collection.conflictPolicy = policy
                changes.append(.declared("policy", name, nil, "conflict policy of \(name) set to \(policy.rawValue)"))
            }
            working.collections[position] = collection
        }
        for collection in working.collections {
            guard let next = new.collection(named: collection.name) else {
                changes.append(.breaking(
                    "drop-collection", collection.name, nil,
                    "collection \(collection.name) removed (declare {\"collection\": \"\(collection.name)\", \"drop\": {}})"))
                continue
            }
            changes += fieldChanges(collection, next, filled: filled)
            for index in next.indexes where !collection.indexes.contains(index) {
                changes.append(.additive("add-index", next.name, nil, "index \(index) added to \(next.name)"))
            }
            for index in collection.indexes where !next.indexes.contains(index) {
                changes.append(.additive("drop-index", next.name, nil, "index \(index) of \(next.name) dropped"))
            }
            if next.conflictPolicy != collection.conflictPolicy {
                if next.conflictPolicy.strictness > collection.conflictPolicy.strictness {
                    changes.append(.breaking(
                        "tighter-policy", next.name, nil,
                        "conflict policy of \(next.name) tightened from \(collection.conflictPolicy.rawValue) to \(next.conflictPolicy.rawValue) (declare {\"collection\": \"\(next.name)\", \"policy\": {\"to\": \"\(next.conflictPolicy.rawValue)\"}})"))
                } else {
                    changes.append(.additive("looser-policy", next.name, nil, "conflict policy of \(next.name) loosened to \(next.conflictPolicy.rawValue)"))
                }
            }
            if next.rules != collection.rules { changes.append(.additive("rules", next.name, nil, "data rules of \(next.name) changed")) }
        }
        for collection in new.collections where working.collection(named: collection.name) == nil {
            // A collection that did not exist holds no records: its required fields need no fill.
            changes.append(.additive("add-collection", collection.name, nil, "collection \(collection.name) added"))
        }
        return SchemaDiff(changes: changes)
    }

    /// The changes of the fields of one collection, after the declared steps (`collection`) and as set (`next`).
    private static func fieldChanges(_ collection: CollectionSchema, _ next: CollectionSchema, filled: Set<String>) -> [SchemaChange] {
        var changes: [SchemaChange] = []
        let name = collection.name
        for field in collection.fields {
            guard let now = next.field(named: field.name) else {
                changes.append(.breaking(
                    "drop-field", name, field.name,
                    "field \(name).\(field.name) removed or renamed (declare {\"collection\": \"\(name)\", \"rename\": {\"from\": \"\(field.name)\", \"to\": ...}} or {\"collection\": \"\(name)\", \"drop\": {\"field\": \"\(field.name)\"}})"))
                continue
            }
            if now.type != field.type {
                changes.append(.breaking(
                    "retype-field", name, field.name,
                    "field \(name).\(field.name) changed type from \(field.type.rawValue) to \(now.type.rawValue) (declare {\"collection\": \"\(name)\", \"convert\": {\"field\": \"\(field.name)\", \"to\": \"\(now.type.rawValue)\"}})"))
            }
            if now.required && !field.required {
                changes.append(requiredChange(name, now, filled: filled))
            } else if field.required && !now.required {
                changes.append(.additive("looser-field", name, field.name, "field \(name).\(field.name) no longer required"))
            }
        }
        for field in next.fields where collection.field(named: field.name) == nil {
            if field.required {
                changes.append(requiredChange(name, field, filled: filled))
            } else {
                changes.append(.additive("add-field", name, field.name, "field \(name).\(field.name) (\(field.type.rawValue)) added"))
            }
        }
        return changes
    }

    private static func requiredChange(_ collection: String, _ field: FieldSchema, filled: Set<String>) -> SchemaChange {
        var change = SchemaChange.breaking(
            "required-field", collection, field.name,
            "field \(collection).\(field.name) is required (declare {\"collection\": \"\(collection)\", \"fill\": {\"field\": \"\(field.name)\", \"value\": ...}})")
        change.isDeclared = filled.contains("\(collection).\(field.name)")
        return change
    }
}

extension SchemaChange {
    static func additive(_ kind: String, _ collection: String, _ field: String?, _ message: String) -> SchemaChange {
        SchemaChange(kind: kind, collection: collection, field: field, isBreaking: false, isDeclared: false, message: message)
    }

    static func breaking(_ kind: String, _ collection: String, _ field: String?, _ message: String) -> SchemaChange {
        SchemaChange(kind: kind, collection: collection, field: field, isBreaking: true, isDeclared: false, message: message)
    }

    static func declared(_ kind: String, _ collection: String, _ field: String?, _ message: String) -> SchemaChange {
        SchemaChange(kind: kind, collection: collection, field: field, isBreaking: true, isDeclared: true, message: message)
    }
}

extension ConflictPolicy {
    /// How many writes the policy refuses, for ordering: `last-writer-wins` 0, `merge-fields` 1, `reject` 2.
    var strictness: Int {
        switch self {
        case .lastWriterWins: return 0
        case .mergeFields: return 1
        case .reject: return 2
        }
    }
}
