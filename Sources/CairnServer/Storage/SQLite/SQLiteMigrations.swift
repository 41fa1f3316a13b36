import GRDB

/// The versioned migrations of the server's own tables. Append new migrations; never edit a shipped one.
enum SQLiteMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-accounts-projects-records") { db in
            try db.execute(sql: """
                CREATE TABLE users (
                    name TEXT PRIMARY KEY NOT NULL,
                    password_hash TEXT NOT NULL,
                    created_at REAL NOT NULL DEFAULT (unixepoch('now'))
                );
                CREATE TABLE tokens (
                    hash TEXT PRIMARY KEY NOT NULL,
                    kind TEXT NOT NULL,
                    user TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                    family TEXT NOT NULL,
                    expires_at REAL NOT NULL,
                    revoked INTEGER NOT NULL DEFAULT 0,
                    used INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX tokens_family ON tokens(family);
                CREATE INDEX tokens_expiry ON tokens(expires_at);
                CREATE TABLE projects (
                    name TEXT PRIMARY KEY NOT NULL,
                    schema_json TEXT NOT NULL,
                    head_version INTEGER NOT NULL DEFAULT 0,
                    created_at REAL NOT NULL
                );
                CREATE TABLE members (
                    project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
                    user TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                    role TEXT NOT NULL,
                    PRIMARY KEY (project, user)
                );
                CREATE TABLE records (
                    project TEXT NOT NULL,
                    collection TEXT NOT NULL,
                    id TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    updated_at TEXT NOT NULL,
                    updated_by TEXT NOT NULL,
                    changed_at REAL NOT NULL,
                    deleted INTEGER NOT NULL DEFAULT 0,
                    data TEXT NOT NULL,
                    field_versions TEXT NOT NULL
                );
                -- A rowid table with its keys in indexes: clients pick random ids (UUIDs), and random inserts
                -- of kilobyte rows into a clustered key would rewrite far more pages than appends do.
                CREATE UNIQUE INDEX records_key ON records(project, collection, id);
                CREATE UNIQUE INDEX records_feed ON records(project, collection, version);
                CREATE INDEX records_tombstones ON records(deleted, changed_at) WHERE deleted = 1;
                CREATE TABLE collection_state (
                    project TEXT NOT NULL,
                    collection TEXT NOT NULL,
                    purged_through INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (project, collection)
                );
                CREATE TABLE operations (
                    project TEXT NOT NULL,
                    op_id TEXT NOT NULL,
                    fingerprint TEXT NOT NULL,
                    result TEXT NOT NULL,
                    created_at REAL NOT NULL
                );
                CREATE UNIQUE INDEX operations_key ON operations(project, op_id);
                CREATE INDEX operations_age ON operations(created_at);
                CREATE TABLE clients (
                    id TEXT PRIMARY KEY NOT NULL,
                    project TEXT NOT NULL,
                    user TEXT NOT NULL,
                    device TEXT,
                    app TEXT,
                    created_at REAL NOT NULL,
                    last_pulled_version INTEGER NOT NULL DEFAULT 0,
                    last_seen REAL NOT NULL
                );
                """)
        }
        migrator.registerMigration("v2-files") { db in
            try db.execute(sql: """
                CREATE TABLE files (
                    project TEXT NOT NULL,
                    id TEXT NOT NULL,
                    name TEXT NOT NULL,
                    content_type TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    sha256 TEXT,
                    status TEXT NOT NULL,
                    tags TEXT NOT NULL,
                    public INTEGER NOT NULL,
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    created_by TEXT NOT NULL,
                    attach_to TEXT,
                    attached_version INTEGER,
                    expires_at REAL,
                    PRIMARY KEY (project, id)
                );
                CREATE UNIQUE INDEX files_id ON files(id);
                CREATE INDEX files_expiry ON files(expires_at) WHERE status = 'new';
                CREATE TABLE file_limits (
                    project TEXT PRIMARY KEY NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
                    maximum_file_bytes INTEGER,
                    maximum_project_bytes INTEGER
                );
                """)
        }
        migrator.registerMigration("v3-operators-sign-in-revocations") { db in
            try db.execute(sql: """
                ALTER TABLE users ADD COLUMN operator INTEGER NOT NULL DEFAULT 0;
                CREATE TABLE sign_in_revocations (
                    user TEXT PRIMARY KEY NOT NULL,
                    revoked_at REAL NOT NULL
                );
                CREATE INDEX tokens_user ON tokens(user);
                CREATE INDEX clients_project ON clients(project, id);
                """)
        }
        migrator.registerMigration("v4-data-rules") { db in
            try db.execute(sql: """
                ALTER TABLE members ADD COLUMN claims TEXT NOT NULL DEFAULT '{}';
                ALTER TABLE records ADD COLUMN prior_version INTEGER;
                ALTER TABLE records ADD COLUMN prior_data TEXT;
                ALTER TABLE records ADD COLUMN rule_data TEXT;
                -- The feed's order with what data rules read: a pull under rules judges each row from the index and
                -- reads only the rows it sends (a reader of 1% of a collection reads 1% of its rows).
                CREATE INDEX records_rules ON records(project, collection, version, deleted, rule_data);
                CREATE TABLE read_scopes (
                    fingerprint TEXT PRIMARY KEY NOT NULL,
                    filter TEXT NOT NULL
                );
                -- Secrets the server makes once, such as the key that signs cursors.
                CREATE TABLE server_secrets (
                    name TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );
                ALTER TABLE collection_state ADD COLUMN history_through INTEGER NOT NULL DEFAULT 0;
                -- Each state a change replaced (data NULL for a tombstone), so the feed can tell whether a reader
                -- whose copy is at some version holds a record that has since left its rules.
                CREATE TABLE record_history (
                    project TEXT NOT NULL,
                    collection TEXT NOT NULL,
                    id TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    data TEXT,
                    superseded_version INTEGER NOT NULL,
                    superseded_at REAL NOT NULL,
                    PRIMARY KEY (project, collection, id, version)
                );
                CREATE INDEX record_history_age ON record_history(superseded_at);
                CREATE TRIGGER records_keep_history AFTER UPDATE OF version ON records WHEN old.version <> new.version
                BEGIN
                    INSERT OR IGNORE INTO record_history (project, collection, id, version, data, superseded_version, superseded_at)
                    VALUES (old.project, old.collection, old.id, old.version, CASE WHEN old.deleted THEN NULL ELSE old.data END,
                            new.version, new.changed_at);
                END;
                """)
        }
        migrator.registerMigration("v5-client-diagnostics") { db in
            try db.execute(sql: """
                -- The latest diagnostics report each client uploaded (JSON text), for support.
                CREATE TABLE client_diagnostics (
                    client_id TEXT PRIMARY KEY NOT NULL,
                    project TEXT NOT NULL,
                    uploaded_at REAL NOT NULL,
                    report TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v6-backups") { db in
            try db.execute(sql: """
                -- Backups of the data directory made by `cairn admin backup`, for operators to see the last one.
                CREATE TABLE backups (
                    created_at REAL NOT NULL,
                    path TEXT NOT NULL,
                    database_bytes INTEGER NOT NULL,
                    file_count INTEGER NOT NULL,
                    PRIMARY KEY (created_at, path)
                );
                """)
        }
        migrator.registerMigration("v7-schema-versions") { db in
            try db.execute(sql: """
                -- Every numbered schema of a project (the current one is also projects.schema_json), with the progress
                -- of the migration of stored records to it.
                CREATE TABLE schema_versions (
                    project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
                    number INTEGER NOT NULL,
                    schema_json TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    migration_state TEXT NOT NULL,
                    migration_through INTEGER,
                    migration_cursor INTEGER NOT NULL,
                    migrated INTEGER NOT NULL,
                    PRIMARY KEY (project, number)
                );
                INSERT INTO schema_versions (project, number, schema_json, created_at, migration_state, migration_cursor, migrated)
                SELECT name, 0, schema_json, created_at, 'none', 0, 0 FROM projects;
                """)
        }
        migrator.registerMigration("v8-lean-write-indexes") { db in
            try db.execute(sql: """
                -- Every index costs every pushed record a B-tree insert (these two, about an eighth of a batch's time).
                -- The feed reads in version order through records_rules, which leads with the same columns; versions
                -- are unique by construction (one writer numbers them under the project's write lock).
                DROP INDEX records_feed;
                -- Remembered operations are purged from the oldest row up, in rowid order (see purge(...)).
                DROP INDEX operations_age;
                """)
        }
        migrator.registerMigration("v9-integrations") { db in
            try db.execute(sql: """
                -- Keys other systems sign in with (`cairn_sk_...`): only a hash of each is kept.
                CREATE TABLE service_keys (
                    project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    role TEXT NOT NULL,
                    key_hash TEXT NOT NULL UNIQUE,
                    created_at REAL NOT NULL,
                    last_used_at REAL,
                    PRIMARY KEY (project, name)
                );
                -- Webhooks and their outbox: a cursor into the project's feed, advanced only by a delivery the receiver
                -- accepted, and the lease that lets one instance at a time deliver.
                CREATE TABLE webhooks (
                    project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    url TEXT NOT NULL,
                    collections TEXT NOT NULL,
                    secret TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    cursor INTEGER NOT NULL,
                    delivered INTEGER NOT NULL,
                    failures INTEGER NOT NULL,
                    failing_since REAL,
                    last_error TEXT,
                    last_attempt_at REAL,
                    last_success_at REAL,
                    next_attempt_at REAL,
                    lease_owner TEXT,
                    lease_until REAL,
                    PRIMARY KEY (project, name)
                );
                -- The answers of actions called through the server, by idempotency key: a key called again answers
                -- the stored answer and does not call the backend twice.
                CREATE TABLE action_calls (
                    project TEXT NOT NULL REFERENCES projects(name) ON DELETE CASCADE,
                    idempotency_key TEXT NOT NULL,
                    action TEXT NOT NULL,
                    caller TEXT NOT NULL,
                    status INTEGER NOT NULL,
                    answer TEXT NOT NULL,
                    completed_at REAL NOT NULL,
                    PRIMARY KEY (project, idempotency_key)
                );
                """)
        }
        migrator.registerMigration("v10-operation-tags") { db in
            // The tag a client gave an operation, kept beside its remembered answer for support.
            try db.execute(sql: "ALTER TABLE operations ADD COLUMN tag TEXT")
        }
        migrator.registerMigration("v11-file-permissions") { db in
            // A file's source and permissions. Files stored before keep today's behaviour: `NULL` permissions are
            // project-wide (FilePermissions.project), as PROTOCOL.md says.
            try db.execute(sql: "ALTER TABLE files ADD COLUMN source TEXT; ALTER TABLE files ADD COLUMN permissions TEXT")
        }
        return migrator
    }
}
