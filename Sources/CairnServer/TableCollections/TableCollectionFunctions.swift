/// The database side of collections kept in PostgreSQL tables (``CollectionSchema/table``), created once by
/// migration 13: the registry of such collections and the functions every one of them shares.
///
/// Two directions, each guarded by the transaction-local setting `cairn.mirroring` so that a write in one direction
/// is not sent back by the other:
/// - **Cairn to the table.** Triggers on `records` (installed with the first table collection) run
///   `cairn_records_to_tables()`, which carries each written record of a registered collection into its table with
///   the statements ``TableCollectionSQL`` made for it (tombstones delete the row). Device batches, schema
///   migrations and anything else that writes records take this one path.
/// - **The table to Cairn.** Statement triggers on the table (``TableCollectionSQL/triggerStatements``) hand the rows
///   a statement changed to `cairn_apply_table_changes`, which numbers them in the project's feed under the
///   project's row lock (so the feed stays gap-free and a rolled-back statement leaves no version behind), as
///   changes by `sql`, and wakes every instance's live listeners with `NOTIFY`.
enum TableCollectionFunctions {
    /// Who Cairn says made a change written to a table with SQL.
    static let sqlWriter = "sql"

    /// The statements of migration 13.
    static let migration: [String] = [
        // Each collection kept in a table, with the two statements that carry records into it. They read the
        // transition table `cairn_changed` (rows of `records`) and take the project and collection as $1 and $2.
        """
        CREATE TABLE table_collections (
            project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
            collection TEXT NOT NULL,
            table_schema TEXT NOT NULL,
            table_name TEXT NOT NULL,
            upsert_sql TEXT NOT NULL,
            delete_sql TEXT NOT NULL,
            PRIMARY KEY (project, collection),
            UNIQUE (table_schema, table_name)
        )
        """,
        // Numbers the changes one statement made to a table: `p_patches[i]` holds the fields it set on record
        // `p_ids[i]` (NULL: the row was deleted). A patch lands on the live record's data (top-level nulls dropped,
        // as Cairn stores data); a change that changes nothing, or deletes what is not there, takes no version.
        // Field versions move for the fields whose value changed, as `BatchPlanner.fieldVersions` moves them.
        #"""
        CREATE FUNCTION cairn_apply_table_changes(p_project text, p_collection text, p_ids text[], p_patches jsonb[])
        RETURNS bigint LANGUAGE plpgsql AS $body$
        DECLARE
            head bigint;
            written bigint;
            newest bigint;
            now_seconds double precision := extract(epoch FROM clock_timestamp());
            now_text text := to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
        BEGIN
            IF p_ids IS NULL OR cardinality(p_ids) = 0 THEN RETURN 0; END IF;
            SELECT head_version INTO head FROM projects WHERE name = p_project FOR UPDATE;
            IF head IS NULL THEN RETURN 0; END IF;
            PERFORM set_config('cairn.mirroring', 'on', true);
            WITH input AS (
                SELECT i.id, i.patch, i.ord FROM unnest(p_ids, p_patches) WITH ORDINALITY AS i(id, patch, ord)
            ), stored AS (
                SELECT input.id, input.ord, input.patch, r.data::jsonb AS data, r.field_versions::jsonb AS versions,
                       coalesce(NOT r.deleted, false) AS live
                FROM input LEFT JOIN records r ON r.project = p_project AND r.collection = p_collection AND r.id = input.id
            ), merged AS (
                SELECT id, ord, data, versions, live,
                       CASE WHEN patch IS NULL THEN NULL ELSE (
                           SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
                           FROM jsonb_each(CASE WHEN live THEN data ELSE '{}'::jsonb END || patch) e
                           WHERE e.value <> 'null'::jsonb)
                       END AS new_data
                FROM stored
            ), effective AS (
                SELECT *, head + row_number() OVER (ORDER BY ord) AS new_version FROM merged
                WHERE CASE WHEN new_data IS NULL THEN live ELSE NOT live OR new_data <> data END
            ), written_rows AS (
                INSERT INTO records (project, collection, id, version, updated_at, updated_by, changed_at, deleted, data,
                                     field_versions, rule_data, prior_version)
                SELECT p_project, p_collection, e.id, e.new_version, now_text, 'sql', now_seconds, e.new_data IS NULL,
                       coalesce(e.new_data::text, '{}'),
                       (SELECT coalesce(jsonb_object_agg(k.key, CASE
                                   WHEN NOT e.live OR e.versions -> k.key IS NULL
                                        OR (e.data -> k.key) IS DISTINCT FROM (coalesce(e.new_data, '{}'::jsonb) -> k.key)
                                   THEN to_jsonb(e.new_version) ELSE e.versions -> k.key END), '{}'::jsonb)::text
                        FROM (SELECT jsonb_object_keys(CASE WHEN e.live THEN coalesce(e.versions, '{}'::jsonb) || coalesce(e.data, '{}'::jsonb) ELSE '{}'::jsonb END
                                                       || coalesce(e.new_data, '{}'::jsonb)) AS key) k),
                       NULL, 0
                FROM effective e
                ON CONFLICT (project, collection, id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at,
                    updated_by = excluded.updated_by, changed_at = excluded.changed_at, deleted = excluded.deleted,
                    data = excluded.data, field_versions = excluded.field_versions, rule_data = NULL,
                    prior_version = records.version,
                    prior_data = CASE WHEN records.deleted THEN NULL ELSE records.data END
                RETURNING version
            )
            SELECT count(*), max(version) INTO written, newest FROM written_rows;
            PERFORM set_config('cairn.mirroring', '', true);
            IF written > 0 THEN
                UPDATE projects SET head_version = newest WHERE name = p_project;
                PERFORM pg_notify('cairn_notices', json_build_object(
                    'from', 'sql', 'project', p_project, 'changes', json_build_object(p_collection, newest))::text);
            END IF;
            RETURN written;
        END
        $body$
        """#,
        // Carries the records a statement wrote into the tables of their collections (see the type's comment).
        #"""
        CREATE FUNCTION cairn_records_to_tables() RETURNS trigger LANGUAGE plpgsql AS $body$
        DECLARE
            target record;
        BEGIN
            IF current_setting('cairn.mirroring', true) = 'on' THEN RETURN NULL; END IF;
            FOR target IN
                SELECT t.project, t.collection, t.upsert_sql, t.delete_sql FROM table_collections t
                WHERE EXISTS (SELECT 1 FROM cairn_changed c WHERE c.project = t.project AND c.collection = t.collection)
            LOOP
                PERFORM set_config('cairn.mirroring', 'on', true);
                EXECUTE target.delete_sql USING target.project, target.collection;
                EXECUTE target.upsert_sql USING target.project, target.collection;
                PERFORM set_config('cairn.mirroring', '', true);
            END LOOP;
            RETURN NULL;
        END
        $body$
        """#,
        // Taken before a statement on a table collection touches a row: the project's row lock first, as device
        // batches take it, so that the two never wait on each other in opposite orders.
        #"""
        CREATE FUNCTION cairn_lock_table_project() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            IF current_setting('cairn.mirroring', true) = 'on' THEN RETURN NULL; END IF;
            PERFORM 1 FROM projects WHERE name = TG_ARGV[0] FOR UPDATE;
            RETURN NULL;
        END
        $body$
        """#,
        // TRUNCATE fires no row triggers: devices would never learn the rows went, so it is refused.
        #"""
        CREATE FUNCTION cairn_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            RAISE EXCEPTION 'Cairn syncs %.% as collection "%" of project "%": delete its rows with DELETE, not TRUNCATE',
                TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[1], TG_ARGV[0]
                USING ERRCODE = 'feature_not_supported';
        END
        $body$
        """#,
        // They run in other software's sessions too, whatever its search path: Cairn's schema is theirs. The two a
        // table's triggers reach run with Cairn's rights (its own role owns them), so other software needs no rights
        // on Cairn's tables; no one but Cairn may call the function that numbers changes directly.
        #"""
        DO $body$ BEGIN
            EXECUTE format('ALTER FUNCTION cairn_apply_table_changes(text, text, text[], jsonb[]) SET search_path = %I', current_schema());
            EXECUTE format('ALTER FUNCTION cairn_records_to_tables() SET search_path = %I', current_schema());
            EXECUTE format('ALTER FUNCTION cairn_lock_table_project() SET search_path = %I', current_schema());
        END $body$
        """#,
        "ALTER FUNCTION cairn_lock_table_project() SECURITY DEFINER",
        "REVOKE EXECUTE ON FUNCTION cairn_apply_table_changes(text, text, text[], jsonb[]) FROM PUBLIC",
    ]

    /// The triggers on `records` that run `cairn_records_to_tables()`, made (again) whenever a table collection is
    /// registered: a database without table collections pays nothing for them.
    static let recordsTriggers: [String] = [
        """
        CREATE OR REPLACE TRIGGER records_to_tables_insert AFTER INSERT ON records REFERENCING NEW TABLE AS cairn_changed
        FOR EACH STATEMENT EXECUTE FUNCTION cairn_records_to_tables()
        """,
        """
        CREATE OR REPLACE TRIGGER records_to_tables_update AFTER UPDATE ON records REFERENCING NEW TABLE AS cairn_changed
        FOR EACH STATEMENT EXECUTE FUNCTION cairn_records_to_tables()
        """,
    ]
}
