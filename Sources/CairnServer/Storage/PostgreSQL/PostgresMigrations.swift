import Logging
import PostgresNIO

/// The versioned migrations of the server's tables on PostgreSQL, the same tables as ``SQLiteMigrations`` in
/// PostgreSQL's types. Append new migrations; never edit a shipped one.
///
/// Several instances may start at once on one database. Each runs ``migrate(_:logger:)`` in one transaction that
/// first takes a transaction-scoped advisory lock: one instance applies what is missing, the others wait for it and
/// then find everything applied. A migration that fails rolls back whole, with its version left unrecorded.
enum PostgresMigrations {
    /// The advisory lock every instance takes to migrate ("cairn" and 1).
    static let lockKey: Int64 = 0x6361_6972_6E00_0001

    /// One step: its version, a name for people, and its statements in order.
    struct Migration: Sendable {
        let version: Int
        let name: String
        let statements: [String]
    }

    /// Every migration, in order.
    static let all: [Migration] = [
        Migration(version: 1, name: "accounts-projects-records", statements: [
            """
            CREATE TABLE users (
                name TEXT PRIMARY KEY,
                password_hash TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL DEFAULT extract(epoch FROM now())
            )
            """,
            """
            CREATE TABLE tokens (
                hash TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                "user" TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                family TEXT NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                revoked BOOLEAN NOT NULL DEFAULT false,
                used BOOLEAN NOT NULL DEFAULT false
            )
            """,
            "CREATE INDEX tokens_family ON tokens(family)",
            "CREATE INDEX tokens_expiry ON tokens(expires_at)",
            """
            CREATE TABLE projects (
                name TEXT PRIMARY KEY,
                schema_json TEXT NOT NULL,
                head_version BIGINT NOT NULL DEFAULT 0,
                created_at DOUBLE PRECISION NOT NULL
            )
            """,
            """
            CREATE TABLE members (
                project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
                "user" TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                role TEXT NOT NULL,
                PRIMARY KEY (project, "user")
            )
            """,
            """
            CREATE TABLE records (
                project TEXT NOT NULL,
                collection TEXT NOT NULL,
                id TEXT NOT NULL,
                version BIGINT NOT NULL,
                updated_at TEXT NOT NULL,
                updated_by TEXT NOT NULL,
                changed_at DOUBLE PRECISION NOT NULL,
                deleted BOOLEAN NOT NULL DEFAULT false,
                data TEXT NOT NULL,
                field_versions TEXT NOT NULL,
                PRIMARY KEY (project, collection, id)
            )
            """,
            "CREATE UNIQUE INDEX records_feed ON records(project, collection, version)",
            "CREATE INDEX records_tombstones ON records(changed_at) WHERE deleted",
            """
            CREATE TABLE collection_state (
                project TEXT NOT NULL,
                collection TEXT NOT NULL,
                purged_through BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (project, collection)
            )
            """,
            """
            CREATE TABLE operations (
                project TEXT NOT NULL,
                op_id TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                result TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (project, op_id)
            )
            """,
            "CREATE INDEX operations_age ON operations(created_at)",
            """
            CREATE TABLE clients (
                id TEXT PRIMARY KEY,
                project TEXT NOT NULL,
                "user" TEXT NOT NULL,
                device TEXT,
                app TEXT,
                created_at DOUBLE PRECISION NOT NULL,
                last_pulled_version BIGINT NOT NULL DEFAULT 0,
                last_seen DOUBLE PRECISION NOT NULL
            )
            """,
        ]),
        Migration(version: 2, name: "files", statements: [
            """
            CREATE TABLE files (
                project TEXT NOT NULL,
                id TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL,
                content_type TEXT NOT NULL,
                size BIGINT NOT NULL,
                sha256 TEXT,
                status TEXT NOT NULL,
                tags TEXT NOT NULL,
                public BOOLEAN NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL,
                created_by TEXT NOT NULL,
                attach_to TEXT,
                attached_version BIGINT,
                expires_at DOUBLE PRECISION,
                PRIMARY KEY (project, id)
            )
            """,
            "CREATE INDEX files_expiry ON files(expires_at) WHERE status = 'new'",
            """
            CREATE TABLE file_limits (
                project TEXT PRIMARY KEY REFERENCES projects(name) ON DELETE CASCADE,
                maximum_file_bytes BIGINT,
                maximum_project_bytes BIGINT
            )
            """,
        ]),
        Migration(version: 3, name: "file-chunks", statements: [
            // File bytes, in chunks, so that every instance serves every file and resumes every upload.
            """
            CREATE TABLE file_chunks (
                project TEXT NOT NULL,
                id TEXT NOT NULL,
                chunk INTEGER NOT NULL,
                bytes BYTEA NOT NULL,
                PRIMARY KEY (project, id, chunk)
            )
            """,
        ]),
        Migration(version: 4, name: "instants", statements: [
            // Filters compare date-times by instant, as `RFC3339.instantKey` does on SQLite: the seconds since 1970 in
            // UTC plus the fraction truncated to nanoseconds, as an exact numeric; NULL for anything but RFC 3339.
            #"""
            CREATE FUNCTION cairn_instant(value text) RETURNS numeric
            LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $body$
            DECLARE
                m text[];
                y bigint; mo bigint; d bigint; h bigint; mi bigint; s bigint;
                era bigint; yoe bigint; doy bigint; days bigint;
                offset_seconds bigint := 0;
                nanos numeric := 0;
            BEGIN
                m := regexp_match(value,
                    '^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))$');
                IF m IS NULL THEN RETURN NULL; END IF;
                y := m[1]::bigint; mo := m[2]::bigint; d := m[3]::bigint;
                h := m[4]::bigint; mi := m[5]::bigint; s := m[6]::bigint;
                IF mo < 1 OR mo > 12 OR d < 1 OR h > 23 OR mi > 59 OR s > 60 THEN RETURN NULL; END IF;
                IF d > (CASE WHEN mo = 2 THEN (CASE WHEN (y % 4 = 0 AND y % 100 <> 0) OR y % 400 = 0 THEN 29 ELSE 28 END)
                             WHEN mo IN (4, 6, 9, 11) THEN 30 ELSE 31 END) THEN RETURN NULL; END IF;
                IF m[8] IS NOT NULL THEN
                    IF m[9]::bigint > 23 OR m[10]::bigint > 59 THEN RETURN NULL; END IF;
                    offset_seconds := (m[9]::bigint * 3600 + m[10]::bigint * 60) * CASE WHEN m[8] = '-' THEN -1 ELSE 1 END;
                END IF;
                IF m[7] IS NOT NULL THEN nanos := rpad(substr(m[7], 2, 9), 9, '0')::numeric; END IF;
                -- Days from the civil date, proleptic Gregorian.
                IF mo <= 2 THEN y := y - 1; END IF;
                era := floor(y / 400.0);
                yoe := y - era * 400;
                doy := (153 * (mo + CASE WHEN mo > 2 THEN -3 ELSE 9 END) + 2) / 5 + d - 1;
                days := era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
                RETURN (days * 86400 + h * 3600 + mi * 60 + s - offset_seconds)::numeric + nanos / 1000000000;
            END
            $body$
            """#,
        ]),
        Migration(version: 5, name: "login-failures", statements: [
            // Failed sign-ins, shared so that the throttle counts attempts spread over instances.
            "CREATE TABLE login_failures (\"user\" TEXT NOT NULL, at DOUBLE PRECISION NOT NULL)",
            "CREATE INDEX login_failures_user ON login_failures(\"user\", at)",
        ]),
        Migration(version: 6, name: "operators-sign-in-revocations", statements: [
            // Server operators, and when each user's sign-ins were last revoked (identity providers' users too).
            "ALTER TABLE users ADD COLUMN operator BOOLEAN NOT NULL DEFAULT false",
            "CREATE TABLE sign_in_revocations (\"user\" TEXT PRIMARY KEY, revoked_at DOUBLE PRECISION NOT NULL)",
            "CREATE INDEX tokens_user ON tokens(\"user\")",
            "CREATE INDEX clients_project ON clients(project, id)",
        ]),
        Migration(version: 7, name: "data-rules", statements: [
            // Claims an operator sets for password users; rules read them as claims.NAME.
            "ALTER TABLE members ADD COLUMN claims TEXT NOT NULL DEFAULT '{}'",
            // The state each change replaced, so the feed knows which readers may hold a record that left their rules.
            "ALTER TABLE records ADD COLUMN prior_version BIGINT",
            "ALTER TABLE records ADD COLUMN prior_data TEXT",
            // The values of the fields data rules read (a small JSON object), so rules need not parse whole records.
            "ALTER TABLE records ADD COLUMN rule_data TEXT",
            // The read filters cursors name by fingerprint, to tell what changed when rules, claims or roles change.
            "CREATE TABLE read_scopes (fingerprint TEXT PRIMARY KEY, filter TEXT NOT NULL)",
            // Secrets the server makes once, such as the key that signs cursors.
            "CREATE TABLE server_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
            // The highest version whose replaced states the purge removed: a cursor under rules below it expires.
            "ALTER TABLE collection_state ADD COLUMN history_through BIGINT NOT NULL DEFAULT 0",
            // Each state a change replaced (data NULL for a tombstone), so the feed can tell whether a reader whose
            // copy is at some version holds a record that has since left its rules.
            """
            CREATE TABLE record_history (
                project TEXT NOT NULL, collection TEXT NOT NULL, id TEXT NOT NULL, version BIGINT NOT NULL, data TEXT,
                superseded_version BIGINT NOT NULL, superseded_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (project, collection, id, version))
            """,
            "CREATE INDEX record_history_age ON record_history(superseded_at)",
            """
            CREATE FUNCTION cairn_keep_record_history() RETURNS trigger LANGUAGE plpgsql AS $body$
            BEGIN
                INSERT INTO record_history (project, collection, id, version, data, superseded_version, superseded_at)
                VALUES (OLD.project, OLD.collection, OLD.id, OLD.version, CASE WHEN OLD.deleted THEN NULL ELSE OLD.data END,
                        NEW.version, NEW.changed_at)
                ON CONFLICT DO NOTHING;
                RETURN NULL;
            END
            $body$
            """,
            """
            CREATE TRIGGER records_keep_history AFTER UPDATE ON records FOR EACH ROW
            WHEN (OLD.version IS DISTINCT FROM NEW.version) EXECUTE FUNCTION cairn_keep_record_history()
            """,
        ]),
        Migration(version: 8, name: "login-failures-by-address", statements: [
            // The throttle counts failures per user and client address, so a stranger cannot lock a user out.
            "ALTER TABLE login_failures ADD COLUMN address TEXT NOT NULL DEFAULT ''",
        ]),
        Migration(version: 9, name: "client-diagnostics", statements: [
            // The latest diagnostics report each client uploaded (JSON text), for support.
            "CREATE TABLE client_diagnostics (client_id TEXT PRIMARY KEY, project TEXT NOT NULL, uploaded_at DOUBLE PRECISION NOT NULL, report TEXT NOT NULL)",
        ]),
        Migration(version: 10, name: "backups", statements: [
            // Backups of a data directory (`cairn admin backup`), listed for operators; a server on PostgreSQL keeps
            // them only when it was migrated from one.
            """
            CREATE TABLE backups (
                created_at DOUBLE PRECISION NOT NULL, path TEXT NOT NULL, database_bytes BIGINT NOT NULL, file_count BIGINT NOT NULL,
                PRIMARY KEY (created_at, path))
            """,
        ]),
        Migration(version: 11, name: "schema-versions", statements: [
            // Every numbered schema of a project (the current one is also projects.schema_json), with the progress of
            // the migration of stored records to it.
            """
            CREATE TABLE schema_versions (
                project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
                number BIGINT NOT NULL,
                schema_json TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                migration_state TEXT NOT NULL,
                migration_through BIGINT,
                migration_cursor BIGINT NOT NULL,
                migrated BIGINT NOT NULL,
                PRIMARY KEY (project, number)
            )
            """,
            """
            INSERT INTO schema_versions (project, number, schema_json, created_at, migration_state, migration_cursor, migrated)
            SELECT name, 0, schema_json, created_at, 'none', 0, 0 FROM projects
            """,
        ]),
        Migration(version: 12, name: "integrations", statements: [
            """
            CREATE TABLE service_keys (
                project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
                name TEXT NOT NULL,
                role TEXT NOT NULL,
                key_hash TEXT NOT NULL UNIQUE,
                created_at DOUBLE PRECISION NOT NULL,
                last_used_at DOUBLE PRECISION,
                PRIMARY KEY (project, name)
            )
            """,
            """
            CREATE TABLE webhooks (
                project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
                name TEXT NOT NULL,
                url TEXT NOT NULL,
                collections TEXT NOT NULL,
                secret TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                cursor BIGINT NOT NULL,
                delivered BIGINT NOT NULL,
                failures BIGINT NOT NULL,
                failing_since DOUBLE PRECISION,
                last_error TEXT,
                last_attempt_at DOUBLE PRECISION,
                last_success_at DOUBLE PRECISION,
                next_attempt_at DOUBLE PRECISION,
                lease_owner TEXT,
                lease_until DOUBLE PRECISION,
                PRIMARY KEY (project, name)
            )
            """,
            """
            CREATE TABLE action_calls (
                project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
                idempotency_key TEXT NOT NULL,
                action TEXT NOT NULL,
                caller TEXT NOT NULL,
                status BIGINT NOT NULL,
                answer TEXT NOT NULL,
                completed_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (project, idempotency_key)
            )
            """,
        ]),
        Migration(version: 13, name: "table-collections", statements: TableCollectionFunctions.migration),
        // The tag a client gave an operation, kept beside its remembered answer for support.
        Migration(version: 14, name: "operation-tags", statements: ["ALTER TABLE operations ADD COLUMN tag text"]),
        // A file's source and permissions; files stored before keep today's behaviour (NULL: project-wide).
        Migration(version: 15, name: "file-permissions", statements: [
            "ALTER TABLE files ADD COLUMN source text", "ALTER TABLE files ADD COLUMN permissions text",
        ]),
    ]

    /// Applies every migration the database lacks, in one transaction under the advisory lock; returns the versions
    /// this call applied (none when another instance got there first).
    @discardableResult
    static func migrate(_ client: PostgresPool, logger: Logger) async throws -> [Int] {
        try await PostgresStorage.transaction(client, logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS cairn_migrations (
                    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
                """, logger: logger)
            var applied = Set<Int>()
            for try await version in try await connection.query("SELECT version FROM cairn_migrations", logger: logger).decode(Int.self) {
                applied.insert(version)
            }
            var done: [Int] = []
            for migration in all where !applied.contains(migration.version) {
                for statement in migration.statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
                try await connection.query(
                    "INSERT INTO cairn_migrations (version, name) VALUES (\(migration.version), \(migration.name))", logger: logger)
                done.append(migration.version)
            }
            return done
        }
    }

    /// The versions the database has applied, in order.
    static func appliedVersions(_ client: PostgresPool, logger: Logger) async throws -> [Int] {
        var versions: [Int] = []
        for try await version in try await client.query("SELECT version FROM cairn_migrations ORDER BY version", logger: logger).decode(Int.self) {
            versions.append(version)
        }
        return versions
    }
}
