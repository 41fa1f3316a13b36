import CairnProtocol
import CairnSQL

/// A filter's name for a field of the record a `reference` field names: `site.region` of a job is the `region` of its
/// site. Data rules (and `where` filters) may follow one reference to one field; the database reads the referenced
/// record's current live state, so a job matches `site.region = north` while its site is in the north.
///
/// When a followed field of a record changes, its referrers are written again at new versions with the same data
/// (``touches(_:from:to:)``), so every reader's feed re-judges them: a reader gains the jobs of a site
/// that moved into its region, and one that held them is told they are gone.
///
/// ```swift
/// let followed = try FollowedReference("site.region", in: jobs)   // jobs.referencedCollections["site"] is sites
/// followed?.field.name   // "region"
/// ```
struct FollowedReference: Sendable {
    /// The `reference` field followed (`site`).
    let reference: FieldSchema
    /// The collection it names (`sites`).
    let target: CollectionSchema
    /// The field read there (`region`, or `id`).
    let field: FieldSchema

    /// The reference `name` follows from `collection`; `nil` when `name` does not start with one of its `reference`
    /// fields (it may be a path inside a `json` field).
    /// - Throws: `validation_failed` naming `name` when it goes further than one field, or the referenced collection
    ///   lacks the field.
    init?(_ name: String, in collection: CollectionSchema) throws(ErrorBody) {
        guard let dot = name.firstIndex(of: "."), let reference = collection.field(named: String(name[..<dot])), reference.type == .reference,
            let targetName = reference.collection
        else { return nil }
        let rest = String(name[name.index(after: dot)...])
        guard !rest.contains(".") else {
            throw .validation("\"\(name)\" follows one reference to one field (\(reference.name).FIELD)", field: name)
        }
        guard let target = collection.referencedCollections[reference.name] else {
            throw .validation("\"\(name)\": \(targetName) is not a collection of the schema", field: name)
        }
        if rest == "id" {
            field = FieldSchema(name: "id", type: .string)
        } else if let declared = target.field(named: rest), declared.type != .json {
            field = declared
        } else {
            throw .validation("\"\(name)\": \(rest) is not a field of \(targetName) a filter can follow (declared, not json, or id)", field: name)
        }
        self.reference = reference
        self.target = target
    }

    /// The outer record's JSON column `document` qualified with the table `records` (as the statements over
    /// `records` name it), unless already qualified.
    static func qualified(_ document: String) -> String { document.contains(".") ? document : "records.\(document)" }

    /// How ``FilterSQL`` reads a followed name in a statement over `records`: a subquery of the referenced record's
    /// row in `records` (the outer statement's rows are `records` too, or a stand-in of that name).
    /// - Parameters:
    ///   - document: the outer record's JSON column, qualified (`records.data`): unqualified, the subquery's own
    ///     columns of the same name would hide it.
    ///   - read: how a field is read from a JSON column; the reference's id is read as `json` (plain text, no
    ///     collation), so the lookup uses the primary key's index on every backend.
    ///   - asOf: `nil` to read the referenced record as it is now (live only); else an SQL expression of a version, to
    ///     read its state at that version from `records` and `record_history` (`NULL` if it was deleted then). The feed
    ///     reads a reader's held copy this way: a followed field's change writes its referrers again, so when a reader
    ///     received a referrer's state, the referenced record's followed fields were as of that state's version.
    static func reader(
        collection: CollectionSchema, document: String, asOf: String? = nil, read: @escaping (FieldSchema, String) -> FieldAccess
    ) -> (String) throws(ErrorBody) -> (FieldSchema, FieldAccess)? {
        { name throws(ErrorBody) in
            guard let followed = try FollowedReference(name, in: collection) else { return nil }
            let value = followed.field.name == "id"
                ? FieldAccess(scalar: "cairn_ref.id", jsonDocument: "cairn_ref.id", jsonPath: "$")
                : read(followed.field, "cairn_ref.data")
            let reference = read(FieldSchema(name: followed.reference.name, type: .json), document).scalar
            let target = "'\(followed.target.name)'"
            let from: String
            if let asOf {
                from = """
                    FROM (SELECT r.version AS version, CASE WHEN r.deleted THEN NULL ELSE r.id END AS id,
                                 CASE WHEN r.deleted THEN NULL ELSE r.data END AS data
                          FROM records AS r WHERE r.project = records.project AND r.collection = \(target) AND r.id = \(reference) AND r.version <= \(asOf)
                          UNION ALL
                          SELECT h.version, CASE WHEN h.data IS NULL THEN NULL ELSE h.id END, h.data
                          FROM record_history AS h WHERE h.project = records.project AND h.collection = \(target) AND h.id = \(reference) AND h.version <= \(asOf)
                         ) AS cairn_ref ORDER BY cairn_ref.version DESC LIMIT 1
                    """
            } else {
                from = """
                    FROM records AS cairn_ref WHERE cairn_ref.project = records.project AND cairn_ref.collection = \(target) \
                    AND cairn_ref.id = \(reference) AND NOT cairn_ref.deleted
                    """
            }
            let access = FieldAccess(
                scalar: "(SELECT \(value.scalar) \(from))", jsonDocument: "(SELECT \(value.jsonDocument) \(from))", jsonPath: value.jsonPath)
            return (FieldSchema(name: name, type: followed.field.type), access)
        }
    }

    /// Whether `filter` names a followed reference of `collection`.
    static func follows(_ filter: Filter, in collection: CollectionSchema) -> Bool {
        switch filter {
        case .and(let filters), .or(let filters): filters.contains { follows($0, in: collection) }
        case .not(let inner): follows(inner, in: collection)
        case .condition(let name, _, _): (try? FollowedReference(name, in: collection)) != nil
        }
    }

    /// The followers of each collection whose fields data rules follow through references (by referring collection and
    /// reference field): a change to one of those fields changes what the rules decide for the referrers. Made once per
    /// batch; empty for a schema whose rules follow no reference.
    static func followers(in schema: Schema) -> [String: [Follower]] {
        var followers: [String: [Follower]] = [:]
        for source in schema.collections {
            guard let rules = source.rules, let resolved = schema.collection(named: source.name) else { continue }
            var fields: [String: Set<String>] = [:]
            for rule in [rules.read, rules.write].compactMap({ $0 }) { collect(rule, in: resolved, into: &fields) }
            for (reference, names) in fields.sorted(by: { $0.key < $1.key }) {
                guard let target = resolved.field(named: reference)?.collection else { continue }
                followers[target, default: []].append(Follower(collection: source.name, reference: reference, fields: names))
            }
        }
        return followers
    }

    /// A collection whose rules follow a reference to another collection's fields.
    struct Follower: Sendable, Hashable {
        /// The referring collection (`jobs`).
        var collection: String
        /// Its `reference` field (`site`).
        var reference: String
        /// The referenced collection's fields its rules read (`region`).
        var fields: Set<String>
    }

    /// Those of `followers` (of the written record's collection) whose fields differ between `previous` and `data`: their
    /// live referrers are written again with the same data. None is asked for a new record (nothing can name it yet) or
    /// a delete (its referrers' `onDelete` decides).
    static func touches(_ followers: [Follower], from previous: [String: JSONValue], to data: [String: JSONValue]) -> [Follower] {
        followers.filter { follower in follower.fields.contains { previous[$0] != data[$0] } }
    }

    /// The live records `data` of `collection` names in its `reference` fields, as JSON text by collection and id,
    /// read from `storage`: what ``RecordFilterEvaluator`` gives a rule that follows a reference.
    static func records(
        namedBy data: [String: JSONValue], in collection: CollectionSchema, project: String, storage: any ServerStorage
    ) async throws -> [String: [String: String]] {
        var records: [String: [String: String]] = [:]
        for field in collection.referenceFields {
            guard let target = collection.referencedCollections[field.name], case .string(let id)? = data[field.name],
                let row = try await storage.liveRow(project: project, collection: target, id: id)
            else { continue }
            records[target.name, default: [:]][id] = row.dataText
        }
        return records
    }

    private static func collect(_ filter: Filter, in collection: CollectionSchema, into fields: inout [String: Set<String>]) {
        switch filter {
        case .and(let filters), .or(let filters): for child in filters { collect(child, in: collection, into: &fields) }
        case .not(let inner): collect(inner, in: collection, into: &fields)
        case .condition(let name, _, _):
            if let followed = try? FollowedReference(name, in: collection) { fields[followed.reference.name, default: []].insert(followed.field.name) }
        }
    }
}
