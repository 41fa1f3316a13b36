import CairnProtocol

/// Read models for reporting on PostgreSQL: one view per ordinary collection (those in tables of their own are
/// tables already), with the record envelope and one typed column per field, so that a BI tool reads Cairn's data
/// without knowing its JSON. A value that does not fit its field's type reads as NULL, never as an error.
///
/// ```swift
/// let views = ReportingViews(project: "field", schema: schema, viewSchema: "reports", cairnSchema: "public")
/// for statement in views.statements { ... }   // CREATE VIEW "reports"."jobs" AS SELECT id, version, ... FROM records
/// ```
struct ReportingViews: Sendable {
    let project: String
    let schema: Schema
    /// The PostgreSQL schema the views go into.
    let viewSchema: String
    /// The PostgreSQL schema of Cairn's own tables.
    let cairnSchema: String

    /// The comment that marks a view as one Cairn made for `project` (views marked so are remade or dropped).
    var marker: String { "Cairn reporting view of project \(project)" }

    /// The collections that get a view.
    var collections: [CollectionSchema] { schema.collections.filter { $0.table == nil } }

    /// The view of one collection.
    func view(of collection: CollectionSchema) -> String {
        let columns = ["r.id", "r.version", "to_timestamp(cairn_instant(r.updated_at)::double precision) AS updated_at", "r.updated_by"]
            + collection.fields.map { "\(Self.typed($0)) AS \"\($0.name)\"" }
        return """
            CREATE VIEW "\(viewSchema)"."\(collection.name)" AS
            SELECT \(columns.joined(separator: ", "))
            FROM "\(cairnSchema)".records r, LATERAL (SELECT r.data::jsonb AS d) j
            WHERE r.project = \(TableCollectionSQL.literal(project)) AND r.collection = \(TableCollectionSQL.literal(collection.name)) AND NOT r.deleted
            """
    }

    /// Field `field` of the JSON object `j.d` as its natural PostgreSQL type (``TableColumn/naturalType(of:)``).
    static func typed(_ field: FieldSchema) -> String {
        let member = "j.d -> '\(field.name)'", kind = "jsonb_typeof(j.d -> '\(field.name)')"
        switch field.type {
        case .string, .file, .reference: return "(CASE WHEN \(kind) = 'string' THEN j.d ->> '\(field.name)' END)"
        case .integer: return "(CASE WHEN \(kind) = 'number' AND abs((\(member))::numeric) < 9.2e18 THEN round((\(member))::numeric)::bigint END)"
        case .number: return "(CASE WHEN \(kind) = 'number' THEN (\(member))::double precision END)"
        case .boolean: return "(CASE WHEN \(kind) = 'boolean' THEN (\(member))::boolean END)"
        case .datetime: return "to_timestamp(cairn_instant(j.d ->> '\(field.name)')::double precision)"
        case .json: return "nullif(\(member), 'null'::jsonb)"
        }
    }
}
