import CairnProtocol
import CairnSQL

/// How a local query reads a field of a referenced record: `site.region` of a job is the `region` of the site row its
/// `site` column names, read by a subquery on the site's primary key, so one query filters on both.
///
/// ```swift
/// try client.records(Query("jobs").filter(.condition("site.region", .eq, "north")))
/// ```
enum ReferencePath {
    /// The field and read of `name` (`REFERENCE.FIELD`) from rows of `table` aliased `qualifier`; `nil` when `name`
    /// does not start with a `reference` field (then it may be a path inside a `json` field).
    /// - Throws: `validation_failed` naming `name` when the referenced collection is not in the store or lacks the
    ///   field, or the path goes further than one field.
    static func resolve(
        _ name: String, from table: CollectionTable, qualifier: String, tables: (String) -> CollectionTable?
    ) throws(ErrorBody) -> (FieldSchema, FieldAccess)? {
        guard let dot = name.firstIndex(of: "."), let reference = table.schema.field(named: String(name[..<dot])), reference.type == .reference,
            let target = reference.collection
        else { return nil }
        let rest = String(name[name.index(after: dot)...])
        guard !rest.contains(".") else {
            throw .validation("\"\(name)\" follows one reference to one field (\(reference.name).FIELD)", field: name)
        }
        guard let targetTable = tables(target) else {
            throw .validation("\"\(name)\": the store has no collection \(target)", field: name)
        }
        let alias = "cairn_ref_\(reference.name)"
        let targetField: FieldSchema
        let read: FieldAccess
        if rest == "id" {
            targetField = FieldSchema(name: "id", type: .string)
            read = FieldAccess(scalar: "\(alias).id", jsonDocument: "json_quote(\(alias).id)", jsonPath: "$")
        } else if let field = targetTable.schema.field(named: rest) {
            targetField = field
            read = targetTable.fieldAccess(field, qualifier: alias)
        } else {
            throw .validation("\"\(name)\": \(rest) is not a field of \(target)", field: name)
        }
        let from = "FROM \(targetTable.quotedName) AS \(alias) WHERE \(alias).id = \(qualifier).\(CollectionTable.quote(reference.name))"
        let access = FieldAccess(
            scalar: "(SELECT \(read.scalar) \(from))", jsonDocument: "(SELECT \(read.jsonDocument) \(from))", jsonPath: read.jsonPath)
        return (FieldSchema(name: name, type: targetField.type), access)
    }
}
