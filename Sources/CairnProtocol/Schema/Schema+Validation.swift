import Foundation

extension Schema {
    /// Checks names, duplicates, index fields and actions; throws `validation_failed` naming the problem.
    public func validate() throws(ErrorBody) {
        var actionNames = Set<String>()
        for action in actions {
            try action.validate()
            guard actionNames.insert(action.name).inserted else {
                throw .validation("action \"\(action.name)\" is listed twice", field: "actions")
            }
        }
        var seen = Set<String>()
        var tables: [TableName: String] = [:]
        for collection in collections {
            guard Names.isValidCollectionName(collection.name) else {
                throw .validation("collection name \"\(collection.name)\" must match ^[a-z][a-z0-9_]{0,62}$ and not start with cairn_", field: "collections")
            }
            guard seen.insert(collection.name).inserted else {
                throw .validation("collection \"\(collection.name)\" is listed twice", field: "collections")
            }
            var fieldNames = Set<String>()
            for field in collection.fields {
                guard Names.isValidFieldName(field.name) else {
                    throw .validation("field name \"\(collection.name).\(field.name)\" is not allowed (letters, digits and _, not id/version/deleted)", field: field.name)
                }
                guard fieldNames.insert(field.name).inserted else {
                    throw .validation("field \"\(collection.name).\(field.name)\" is listed twice", field: field.name)
                }
                try validateReference(field, of: collection)
            }
            if let text = collection.table {
                let table = try TableName(parsing: text)
                if let other = tables.updateValue(collection.name, forKey: table) {
                    throw .validation("collections \"\(other)\" and \"\(collection.name)\" name the same table \(table)", field: "table")
                }
            }
            for index in collection.indexes {
                guard !index.isEmpty else { throw .validation("an index of \"\(collection.name)\" lists no fields", field: "indexes") }
                for name in index where !fieldNames.contains(name) {
                    throw .validation("index field \"\(collection.name).\(name)\" is not a field of the collection", field: name)
                }
            }
        }
    }
}

extension Schema {
    /// A `reference` field names a collection of the schema, and a required one is not cleared by `nullify`; other
    /// fields name neither a collection nor an `onDelete`.
    private func validateReference(_ field: FieldSchema, of collection: CollectionSchema) throws(ErrorBody) {
        let path = "\(collection.name).\(field.name)"
        guard field.type == .reference else {
            if field.collection != nil || field.onDelete != nil {
                throw .validation("field \"\(path)\" is not a reference: collection and onDelete belong to reference fields", field: field.name)
            }
            return
        }
        guard let target = field.collection else {
            throw .validation("reference field \"\(path)\" names no collection", field: field.name)
        }
        guard self.collection(named: target) != nil else {
            throw .validation("reference field \"\(path)\" names \"\(target)\", which is not a collection of the schema", field: field.name)
        }
        if field.required, field.deletion == .nullify {
            throw .validation("reference field \"\(path)\" is required, so deleting its record cannot clear it: use restrict or cascade", field: field.name)
        }
    }

    /// The `reference` fields that name records of `collection`, with their collections.
    public func references(to collection: String) -> [(collection: CollectionSchema, field: FieldSchema)] {
        collections.flatMap { source in
            source.fields.filter { $0.type == .reference && $0.collection == collection }.map { (source, $0) }
        }
    }
}

extension CollectionSchema {
    /// Its `reference` fields.
    public var referenceFields: [FieldSchema] { fields.filter { $0.type == .reference } }

    /// Checks record data against the declared field types; undeclared fields pass, `null` passes but for a
    /// required field.
    public func validate(data: [String: JSONValue]) throws(ErrorBody) {
        for field in fields {
            guard let value = data[field.name], !value.isNull else {
                if field.required { throw .validation("field \"\(field.name)\" of \(name) is required", field: field.name) }
                continue
            }
            guard field.type.accepts(value) else {
                throw .validation("field \"\(field.name)\" of \(name) must be \(field.type.article), not \(value.kindName)", field: field.name)
            }
        }
        for (key, value) in data where key.holdsNullCharacter || value.holdsNullCharacter {
            throw .validation("field \"\(key.replacingOccurrences(of: "\u{0}", with: "\\u0000"))\" of \(name) holds U+0000, which strings cannot hold", field: key)
        }
    }
}

extension JSONValue {
    /// True when a string anywhere in the value (or an object's key) holds U+0000, which Cairn's databases cannot
    /// compare or (PostgreSQL's `jsonb`) store.
    var holdsNullCharacter: Bool {
        switch self {
        case .string(let text): return text.holdsNullCharacter
        case .array(let values): return values.contains { $0.holdsNullCharacter }
        case .object(let members): return members.contains { $0.key.holdsNullCharacter || $0.value.holdsNullCharacter }
        default: return false
        }
    }
}

extension String {
    /// True when the text holds U+0000 (looked for with `memchr` over its UTF-8: every string of every pushed record
    /// is checked).
    var holdsNullCharacter: Bool {
        var text = self
        return text.withUTF8 { bytes in bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false }
    }
}

extension FieldType {
    /// True when `value` (not null) fits this type.
    public func accepts(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.json, _): return true
        case (.string, .string), (.boolean, .bool), (.number, .integer), (.number, .number): return true
        case (.integer, .integer): return true
        case (.integer, .number(let double)): return double.rounded() == double
        case (.datetime, .string(let text)): return RFC3339.isValid(text)
        case (.file, .string(let id)), (.reference, .string(let id)): return Names.isValidID(id)
        default: return false
        }
    }

    /// The type's name with an article, for messages: "a string", "an integer".
    public var article: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .number: return "a number"
        case .boolean: return "a boolean"
        case .datetime: return "an RFC 3339 date-time string"
        case .json: return "any JSON value"
        case .file: return "a file id"
        case .reference: return "a record id"
        }
    }
}

extension ErrorBody {
    /// A `validation_failed` error naming `field`.
    public static func validation(_ message: String, field: String? = nil) -> ErrorBody {
        ErrorBody(code: .validationFailed, message: message, details: field.map { ["field": .string($0)] })
    }
}
