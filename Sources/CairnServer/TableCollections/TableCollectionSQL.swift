import CairnProtocol
import Crypto
import Foundation

/// The SQL of one collection kept in a PostgreSQL table: the table itself, the statements that carry records into
/// it, and the trigger function and triggers that carry SQL writes to Cairn (``TableCollectionFunctions`` has the
/// shared halves). The one place this SQL is written.
///
/// ```swift
/// let sql = TableCollectionSQL(project: "field", collection: jobs, table: try TableName(parsing: "erp.jobs"),
///                              columns: jobs.fields.map(TableColumn.init(field:)), cairnSchema: "public")
/// ```
struct TableCollectionSQL: Sendable {
    let project: String
    let collection: String
    let table: TableName
    /// The collection's declared fields as columns of the table.
    let columns: [TableColumn]
    /// The PostgreSQL schema Cairn's own tables live in: the trigger function runs with it as its search path, so it
    /// works from a session whose search path is the other software's.
    let cairnSchema: String

    /// The name of the collection's trigger function: one per collection, named by a digest of project and
    /// collection (their names together may be longer than an identifier).
    var functionName: String {
        let digest = SHA256.hash(data: Data("\(project)/\(collection)".utf8))
        return "cairn_table_" + digest.prefix(10).map { String(format: "%02x", $0) }.joined()
    }

    /// Creates the table, one column per field in its natural type, the record id as primary key.
    var createTable: [String] {
        let definitions = ["id text PRIMARY KEY"] + columns.map { "\($0.quoted) \($0.sqlType)" }
        return [
            "CREATE SCHEMA IF NOT EXISTS \"\(table.schema)\"",
            "CREATE TABLE \(table.quoted) (\(definitions.joined(separator: ", ")))",
        ]
    }

    /// Writes the live records of `cairn_changed` ($1 project, $2 collection) into the table: new ids inserted, the
    /// fields of existing rows set (other columns left alone), rows that would not change not touched.
    var upsertSQL: String {
        let names = (["id"] + columns.map(\.quoted)).joined(separator: ", ")
        // Each record's JSON parsed once, not once per column.
        let values = (["c.id"] + columns.map { $0.value(from: "j.d") }).joined(separator: ", ")
        var sql = """
            INSERT INTO \(table.quoted) AS t (\(names))
            SELECT \(values) FROM cairn_changed c, LATERAL (SELECT c.data::jsonb AS d) j
            WHERE c.project = $1 AND c.collection = $2 AND NOT c.deleted
            """
        if columns.isEmpty {
            sql += " ON CONFLICT (id) DO NOTHING"
        } else {
            let set = columns.map { "\($0.quoted) = excluded.\($0.quoted)" }.joined(separator: ", ")
            let changed = columns.map { $0.changed(from: "t", to: "excluded") }.joined(separator: " OR ")
            sql += " ON CONFLICT (id) DO UPDATE SET \(set) WHERE \(changed)"
        }
        return sql
    }

    /// Deletes the rows whose records `cairn_changed` ($1 project, $2 collection) made tombstones.
    var deleteSQL: String {
        """
        DELETE FROM \(table.quoted) WHERE id IN (
            SELECT c.id FROM cairn_changed c WHERE c.project = $1 AND c.collection = $2 AND c.deleted)
        """
    }

    /// Every field of row `row` as a JSON object.
    func document(of row: String) -> String {
        guard !columns.isEmpty else { return "'{}'::jsonb" }
        return "jsonb_build_object(" + columns.map { "'\($0.field.name)', \($0.json(of: row))" }.joined(separator: ", ") + ")"
    }

    /// The fields that differ between rows `old` and `new`, as a JSON object of their new values.
    func patch(from old: String, to new: String) -> String {
        guard !columns.isEmpty else { return "'{}'::jsonb" }
        return columns.map { "(CASE WHEN \($0.changed(from: old, to: new)) THEN jsonb_build_object('\($0.field.name)', \($0.json(of: new))) ELSE '{}'::jsonb END)" }
            .joined(separator: " || ")
    }

    /// A SQL string literal.
    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// The trigger function: hands the rows a statement inserted, updated or deleted to `cairn_apply_table_changes`
    /// (an update that changed a row's id deletes the old id and inserts the new one).
    var triggerFunction: String {
        let project = Self.literal(project), collection = Self.literal(collection)
        return """
            CREATE OR REPLACE FUNCTION \(functionName)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
            SET search_path = "\(cairnSchema)" AS $body$
            DECLARE
                refused text;
            BEGIN
                IF current_setting('cairn.mirroring', true) = 'on' THEN RETURN NULL; END IF;
                IF TG_OP <> 'DELETE' THEN
                    SELECT \(refusal) INTO refused FROM cairn_new n WHERE \(refusedRow) LIMIT 1;
                    IF refused IS NOT NULL THEN
                        RAISE EXCEPTION '%', refused USING ERRCODE = 'check_violation';
                    END IF;
                END IF;
                IF TG_OP = 'INSERT' THEN
                    PERFORM cairn_apply_table_changes(\(project), \(collection), array_agg(n.id ORDER BY n.id),
                        array_agg(\(document(of: "n")) ORDER BY n.id)) FROM cairn_new n;
                ELSIF TG_OP = 'UPDATE' THEN
                    PERFORM cairn_apply_table_changes(\(project), \(collection), array_agg(x.id ORDER BY x.id), array_agg(x.patch ORDER BY x.id))
                    FROM (
                        SELECT n.id, CASE WHEN o.id IS NULL THEN \(document(of: "n")) ELSE \(patch(from: "o", to: "n")) END AS patch
                        FROM cairn_new n LEFT JOIN cairn_old o ON o.id = n.id
                        UNION ALL
                        SELECT o.id, NULL::jsonb FROM cairn_old o WHERE NOT EXISTS (SELECT 1 FROM cairn_new n WHERE n.id = o.id)
                    ) x;
                ELSE
                    PERFORM cairn_apply_table_changes(\(project), \(collection), array_agg(o.id ORDER BY o.id),
                        array_agg(NULL::jsonb ORDER BY o.id)) FROM cairn_old o;
                END IF;
                RETURN NULL;
            END
            $body$
            """
    }

    /// True for a row devices could not take: an id that is not a record id, or a required field left NULL.
    var refusedRow: String {
        (["n.id IS NULL OR n.id !~ '^[A-Za-z0-9_.:-]{1,128}$'"] + columns.filter(\.field.required).map { "n.\($0.quoted) IS NULL" })
            .joined(separator: " OR ")
    }

    /// Why such a row is refused, in words.
    var refusal: String {
        let required = columns.filter(\.field.required).map {
            "WHEN n.\($0.quoted) IS NULL THEN 'Cairn syncs \(table) as collection \(collection): column \($0.field.name) of row ' || n.id || ' is required'"
        }
        return """
            CASE WHEN n.id IS NULL OR n.id !~ '^[A-Za-z0-9_.:-]{1,128}$' THEN 'Cairn syncs \(table) as collection \(collection): '
                || 'id ' || coalesce(quote_literal(n.id), 'NULL') || ' is not a record id (1 to 128 of A-Z a-z 0-9 _ . : -)'
            \(required.joined(separator: "\n")) END
            """
    }

    /// The names of the triggers Cairn puts on the table.
    static let triggerNames = ["cairn_lock", "cairn_insert", "cairn_update", "cairn_delete", "cairn_truncate"]

    /// The function and the triggers on the table (made again when the schema changes: the columns may have).
    var triggerStatements: [String] {
        let arguments = "\(Self.literal(project)), \(Self.literal(collection))"
        return [
            triggerFunction,
            """
            CREATE OR REPLACE TRIGGER cairn_lock BEFORE INSERT OR UPDATE OR DELETE ON \(table.quoted)
            FOR EACH STATEMENT EXECUTE FUNCTION "\(cairnSchema)".cairn_lock_table_project(\(arguments))
            """,
            """
            CREATE OR REPLACE TRIGGER cairn_insert AFTER INSERT ON \(table.quoted) REFERENCING NEW TABLE AS cairn_new
            FOR EACH STATEMENT EXECUTE FUNCTION "\(cairnSchema)".\(functionName)()
            """,
            """
            CREATE OR REPLACE TRIGGER cairn_update AFTER UPDATE ON \(table.quoted) REFERENCING OLD TABLE AS cairn_old NEW TABLE AS cairn_new
            FOR EACH STATEMENT EXECUTE FUNCTION "\(cairnSchema)".\(functionName)()
            """,
            """
            CREATE OR REPLACE TRIGGER cairn_delete AFTER DELETE ON \(table.quoted) REFERENCING OLD TABLE AS cairn_old
            FOR EACH STATEMENT EXECUTE FUNCTION "\(cairnSchema)".\(functionName)()
            """,
            """
            CREATE OR REPLACE TRIGGER cairn_truncate BEFORE TRUNCATE ON \(table.quoted)
            FOR EACH STATEMENT EXECUTE FUNCTION "\(cairnSchema)".cairn_refuse_truncate(\(arguments))
            """,
        ]
    }

    /// Takes Cairn's triggers and function off the table (the collection is no longer kept there); the table stays.
    var dropStatements: [String] {
        Self.triggerNames.map { "DROP TRIGGER IF EXISTS \($0) ON \(table.quoted)" } + ["DROP FUNCTION IF EXISTS \(functionName)()"]
    }

    /// Numbers every row of the table as a change by `sql` (rows equal to their record take no version): what an
    /// adopted table held before Cairn watched it.
    var importRows: String {
        """
        SELECT cairn_apply_table_changes(\(Self.literal(project)), \(Self.literal(collection)), array_agg(n.id ORDER BY n.id),
            array_agg(\(document(of: "n")) ORDER BY n.id)) FROM \(table.quoted) n
        """
    }

    /// Writes every live record of the collection ($1 project, $2 collection) into the table (rows equal to it left
    /// alone); run under the mirroring guard: a collection's records before it moved into the table.
    var exportRecords: String {
        """
        WITH cairn_changed AS (
            SELECT project, collection, id, deleted, data FROM records WHERE project = $1 AND collection = $2 AND NOT deleted)
        \(upsertSQL)
        """
    }
}
