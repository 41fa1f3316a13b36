/// The type of a schema field; the raw value is PROTOCOL.md's `type`.
///
/// `string`, `integer`, `number`, `boolean`, `datetime` (an RFC 3339 string), `json` (any value), `file` (a file id)
/// and `reference` (the id of a record of another collection, ``FieldSchema/collection``).
public enum FieldType: String, Codable, Sendable, CaseIterable {
    case string, integer, number, boolean, datetime, json, file, reference
}

/// How the server settles a write made on a stale `baseVersion`.
public enum ConflictPolicy: String, Codable, Sendable, CaseIterable {
    /// Refuse the write and answer `conflict` with the current state (the default).
    case reject
    /// Apply when none of the fields the write touches changed after `baseVersion`.
    case mergeFields = "merge-fields"
    /// Apply regardless.
    case lastWriterWins = "last-writer-wins"
}

/// One field of a collection.
public struct FieldSchema: Codable, Sendable, Hashable {
    /// The field's name, also its column name in local stores.
    public var name: String
    /// The field's type: which values the server accepts for it and how filters compare them.
    public var type: FieldType
    /// Whether every live record must hold a value (not `null`) for it; `false` by default.
    public var required: Bool
    /// For a `reference` field, the collection whose record it names; `nil` for other types.
    public var collection: String?
    /// For a `reference` field, what deleting the named record does to records naming it (``ReferenceAction``;
    /// `restrict` when `nil`); `nil` for other types.
    public var onDelete: ReferenceAction?

    /// Declares a field: `FieldSchema(name: "due", type: .datetime)`; a reference with
    /// ``reference(_:to:onDelete:required:)``.
    public init(name: String, type: FieldType, required: Bool = false, collection: String? = nil, onDelete: ReferenceAction? = nil) {
        self.name = name
        self.type = type
        self.required = required
        self.collection = collection
        self.onDelete = onDelete
    }

    /// A `reference` field naming a record of `collection`.
    ///
    /// ```swift
    /// FieldSchema.reference("site", to: "sites", onDelete: .cascade)
    /// ```
    public static func reference(_ name: String, to collection: String, onDelete: ReferenceAction = .restrict, required: Bool = false) -> FieldSchema {
        FieldSchema(name: name, type: .reference, required: required, collection: collection, onDelete: onDelete)
    }

    /// What deleting a referenced record does: ``onDelete``, or `restrict` when unset.
    public var deletion: ReferenceAction { onDelete ?? .restrict }

    enum CodingKeys: String, CodingKey, CaseIterable { case name, type, required, collection, onDelete }

    /// Decodes a field object; an absent `required` reads as `false`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        type = try container.decode(FieldType.self, forKey: .type)
        required = try container.decodeIfPresent(Bool.self, forKey: .required) ?? false
        collection = try container.decodeIfPresent(String.self, forKey: .collection)
        onDelete = try container.decodeIfPresent(ReferenceAction.self, forKey: .onDelete)
    }

    /// Encodes the field; `required`, `collection` and `onDelete` only when set.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(type, forKey: .type)
        if required { try container.encode(true, forKey: .required) }
        try container.encodeIfPresent(collection, forKey: .collection)
        try container.encodeIfPresent(onDelete, forKey: .onDelete)
    }
}

/// What deleting a record does to the records whose `reference` fields name it (a field's ``FieldSchema/onDelete``),
/// in the delete's own transaction; the changes reach devices as ordinary changes.
public enum ReferenceAction: String, Codable, Sendable, CaseIterable {
    /// The delete is refused while a live record names it (`validation_failed`). The default.
    case restrict
    /// The field is cleared in every record naming it.
    case nullify
    /// Every record naming it is deleted too (and so on, by their own references).
    case cascade
}

/// One collection of a project: its fields, indexes and conflict policy.
public struct CollectionSchema: Codable, Sendable, Hashable {
    /// The collection's name, unique in the schema: `^[a-z][a-z0-9_]{0,62}$`, not starting with `cairn_`.
    public var name: String
    /// The declared fields. Records may hold other fields; those sync but are not columns or filterable.
    public var fields: [FieldSchema]
    /// Indexes, each a list of field names.
    public var indexes: [[String]]
    /// How conflicting writes are settled.
    public var conflictPolicy: ConflictPolicy
    /// Who may read and write which records (enforced by the server); `nil`: every member reads, every writer writes.
    public var rules: DataRules?
    /// The PostgreSQL table, `SCHEMA.NAME`, that holds the collection's records as rows with one column per field
    /// (PostgreSQL backend only); `nil`: Cairn keeps them itself. See ``TableName``.
    public var table: String?
    /// The collections its `reference` fields name, by field, as ``Schema/collection(named:)`` returns them: what data
    /// rules that follow a reference (`site.region`) read. Not part of the schema's JSON, equality or hash.
    package var referencedCollections: [String: CollectionSchema] = [:]

    /// Declares a collection; with no indexes, the `reject` policy, no rules and no table unless given.
    public init(
        name: String, fields: [FieldSchema], indexes: [[String]] = [], conflictPolicy: ConflictPolicy = .reject, rules: DataRules? = nil,
        table: String? = nil
    ) {
        self.name = name
        self.fields = fields
        self.indexes = indexes
        self.conflictPolicy = conflictPolicy
        self.rules = rules
        self.table = table
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case name, fields, indexes, conflictPolicy, rules, table }

    /// Decodes a collection object; absent `fields` and `indexes` read as empty, an absent `conflictPolicy` as `reject`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        fields = try container.decodeIfPresent([FieldSchema].self, forKey: .fields) ?? []
        indexes = try container.decodeIfPresent([[String]].self, forKey: .indexes) ?? []
        conflictPolicy = try container.decodeIfPresent(ConflictPolicy.self, forKey: .conflictPolicy) ?? .reject
        let decodedRules = try container.decodeIfPresent(DataRules.self, forKey: .rules)
        rules = decodedRules?.isEmpty == true ? nil : decodedRules
        table = try container.decodeIfPresent(String.self, forKey: .table)
    }

    /// Encodes the collection; `rules` and `table` only when it has them.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(fields, forKey: .fields)
        try container.encode(indexes, forKey: .indexes)
        try container.encode(conflictPolicy, forKey: .conflictPolicy)
        try container.encodeIfPresent(rules, forKey: .rules)
        try container.encodeIfPresent(table, forKey: .table)
    }

    /// The field named `name`, if declared.
    public func field(named name: String) -> FieldSchema? { fields.first { $0.name == name } }

    /// Whether both declare the same collection (``referencedCollections`` aside).
    public static func == (lhs: CollectionSchema, rhs: CollectionSchema) -> Bool {
        lhs.name == rhs.name && lhs.fields == rhs.fields && lhs.indexes == rhs.indexes && lhs.conflictPolicy == rhs.conflictPolicy
            && lhs.rules == rhs.rules && lhs.table == rhs.table
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(fields)
        hasher.combine(indexes)
        hasher.combine(conflictPolicy)
        hasher.combine(rules)
        hasher.combine(table)
    }
}

/// A project's schema.
///
/// ```swift
/// let schema = Schema(collections: [
///     CollectionSchema(name: "notes", fields: [FieldSchema(name: "title", type: .string)],
///                      conflictPolicy: .mergeFields)])
/// ```
public struct Schema: Codable, Sendable, Hashable {
    /// A digest of the canonical schema, set by the server; empty in a schema a client sends.
    public var version: String
    /// The project's collections; their order does not change ``version``.
    public var collections: [CollectionSchema]
    /// The schema's number, set by the server: each schema set makes the next (1, 2, ...); 0 for a new project's
    /// empty schema. App builds name the number they were made for (``SchemaMigration``, `Cairn-Schema-Version`).
    public var number: Int
    /// The oldest schema number whose app builds may still sync (`nil`: every one); older ones get
    /// `426 upgrade_required`.
    public var minimumSchemaVersion: Int?
    /// The steps from the previous schema to this one, for a breaking change (see ``SchemaMigration``).
    public var migrations: [SchemaMigration]
    /// The backend calls devices may make through the server (`POST .../actions/NAME`); see ``ActionSchema``.
    public var actions: [ActionSchema]

    /// Creates a schema; leave `version` empty when sending one with `PUT .../schema`, the server sets it, and
    /// `number`.
    public init(
        version: String = "", collections: [CollectionSchema], number: Int = 0, minimumSchemaVersion: Int? = nil,
        migrations: [SchemaMigration] = [], actions: [ActionSchema] = []
    ) {
        self.version = version
        self.collections = collections
        self.number = number
        self.minimumSchemaVersion = minimumSchemaVersion
        self.migrations = migrations
        self.actions = actions
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case version, collections, number, minimumSchemaVersion, migrations, actions }

    /// Decodes a schema object; an absent `version` reads as `""`, absent `collections`, `migrations` and `actions`
    /// as empty, an absent `number` as 0.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decodeIfPresent(String.self, forKey: .version) ?? ""
        collections = try container.decodeIfPresent([CollectionSchema].self, forKey: .collections) ?? []
        number = try container.decodeIfPresent(Int.self, forKey: .number) ?? 0
        // A negative number could not be written back (``encode(to:)`` writes it when set, above 0).
        guard number >= 0 else { throw DecodingError.dataCorruptedError(forKey: .number, in: container, debugDescription: "number counts from 0") }
        minimumSchemaVersion = try container.decodeIfPresent(Int.self, forKey: .minimumSchemaVersion)
        migrations = try container.decodeIfPresent([SchemaMigration].self, forKey: .migrations) ?? []
        actions = try container.decodeIfPresent([ActionSchema].self, forKey: .actions) ?? []
    }

    /// Encodes the schema; `number` when set, `minimumSchemaVersion`, `migrations` and `actions` only when they hold
    /// something.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(collections, forKey: .collections)
        if number > 0 { try container.encode(number, forKey: .number) }
        try container.encodeIfPresent(minimumSchemaVersion, forKey: .minimumSchemaVersion)
        if !migrations.isEmpty { try container.encode(migrations, forKey: .migrations) }
        if !actions.isEmpty { try container.encode(actions, forKey: .actions) }
    }

    /// The collection named `name`, if any.
    ///
    /// The collection returned knows the collections its `reference` fields name (one step), so a filter on it may
    /// read their fields (`site.region`).
    public func collection(named name: String) -> CollectionSchema? {
        guard var found = collections.first(where: { $0.name == name }) else { return nil }
        for field in found.fields where field.type == .reference {
            if let target = field.collection, let referenced = collections.first(where: { $0.name == target }) {
                found.referencedCollections[field.name] = referenced
            }
        }
        return found
    }

    /// The action named `name`, if declared.
    public func action(named name: String) -> ActionSchema? { actions.first { $0.name == name } }

    /// The schema as canonical JSON text without its version: the input of the version digest.
    public var canonicalText: String {
        let collectionsValue = collections.sorted { $0.name < $1.name }.map { collection -> JSONValue in
            var members: [String: JSONValue] = [
                "name": .string(collection.name),
                "fields": .array(collection.fields.map { field -> JSONValue in
                    // A field that is not required keeps the text (and so the version) it had before `required` existed.
                    var members: [String: JSONValue] = ["name": .string(field.name), "type": .string(field.type.rawValue)]
                    if field.required { members["required"] = .bool(true) }
                    return .object(members)
                }),
                "indexes": .array(collection.indexes.map { .array($0.map { .string($0) }) }),
                "conflictPolicy": .string(collection.conflictPolicy.rawValue),
            ]
            // A collection without rules keeps the text (and so the version) it had before rules existed.
            if let rules = collection.rules { members["rules"] = rules.jsonValue }
            // Likewise without a table.
            if let table = collection.table { members["table"] = .string(table) }
            return .object(members)
        }
        // A schema without actions keeps the text (and so the version) it had before actions existed.
        var members: [String: JSONValue] = ["collections": .array(collectionsValue)]
        if !actions.isEmpty { members["actions"] = .array(actions.sorted { $0.name < $1.name }.map(\.jsonValue)) }
        return JSONValue.object(members).jsonText()
    }
}
