import CairnProtocol

/// A schema's migration steps as `ALTER TABLE` on a table collection's table: a rename renames the column, a
/// conversion changes its type (values that do not convert become NULL, as ``DataStep`` leaves them out), a drop
/// drops it. Each statement is skipped when the table already has the step's shape, so setting a schema again
/// changes nothing. Filled values arrive with the migrated records.
struct TableEvolution: Sendable {
    let table: TableName
    /// The table's columns now, name to type (`format_type`).
    var columns: [String: String]

    /// The statements for `steps` (those of other collections are passed over), in order; `columns` follows them.
    mutating func statements(for steps: [DataStep], collection: String) -> [String] {
        var statements: [String] = []
        for step in steps where step.collection == collection {
            switch step.kind {
            case .rename(let from, let to):
                guard let type = columns[from], columns[to] == nil else { continue }
                statements.append("ALTER TABLE \(table.quoted) RENAME COLUMN \"\(from)\" TO \"\(to)\"")
                columns[from] = nil
                columns[to] = type
            case .convert(let field, let from, let to, _):
                guard let type = columns[field], !TableColumn.fits(type, to) else { continue }
                let natural = TableColumn.naturalType(of: to)
                statements.append(
                    "ALTER TABLE \(table.quoted) ALTER COLUMN \"\(field)\" TYPE \(natural) USING \(Self.conversion(of: "\"\(field)\"", from: from, to: to))")
                columns[field] = natural
            case .drop(let field):
                guard columns[field] != nil else { continue }
                statements.append("ALTER TABLE \(table.quoted) DROP COLUMN \"\(field)\"")
                columns[field] = nil
            case .fill:
                continue
            }
        }
        return statements
    }

    /// `column` of type `from` as a value of type `to`, NULL where ``ValueConversion`` finds no value.
    static func conversion(of column: String, from: FieldType, to: FieldType) -> String {
        // A json value's text, unquoted when it is a JSON string.
        let text = from == .json ? "(CASE WHEN jsonb_typeof(\(column)) = 'string' THEN \(column) #>> '{}' ELSE \(column)::text END)" : column
        switch (from, to) {
        case (.datetime, .string): return "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
        case (.datetime, .json): return "to_jsonb(to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'))"
        case (_, .json): return "to_jsonb(\(column))"
        case (_, .string): return "\(text)::text"
        case (.number, .integer): return "round(\(column))::bigint"
        case (.boolean, .integer): return "(\(column))::int::bigint"
        case (.integer, .boolean): return "(\(column) <> 0)"
        case (.integer, .number): return "(\(column))::double precision"
        case (.string, .integer), (.json, .integer):
            return "(CASE WHEN btrim(\(text)) ~ '^[-+]?[0-9]{1,18}$' THEN btrim(\(text))::bigint END)"
        case (.string, .number), (.json, .number):
            return "(CASE WHEN btrim(\(text)) ~ '^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]{1,3})?$' THEN btrim(\(text))::double precision END)"
        case (.string, .boolean), (.json, .boolean):
            return "(CASE lower(btrim(\(text))) WHEN 'true' THEN true WHEN 'yes' THEN true WHEN '1' THEN true WHEN 'false' THEN false WHEN 'no' THEN false WHEN '0' THEN false END)"
        case (.string, .datetime), (.json, .datetime):
            return "(CASE WHEN cairn_instant(\(text)) IS NOT NULL THEN to_timestamp(cairn_instant(\(text))::double precision) END)"
        case (.string, .file), (.json, .file):
            return "(CASE WHEN \(text) ~ '^[A-Za-z0-9_.:-]{1,128}$' THEN \(text) END)"
        default:
            return "NULL"
        }
    }
}
