import GRDB

/// Versioned migrations of Cairn's own tables in the local store. Append; never edit a shipped migration.
enum LocalMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-cairn-tables") { db in
            try db.execute(sql: """
                CREATE TABLE cairn_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                CREATE TABLE cairn_collections (
                    name TEXT PRIMARY KEY NOT NULL,
                    cursor TEXT,
                    first_pull_done INTEGER NOT NULL DEFAULT 0,
                    needs_pull INTEGER NOT NULL DEFAULT 1,
                    pulling INTEGER NOT NULL DEFAULT 0,
                    resyncing INTEGER NOT NULL DEFAULT 0,
                    filter TEXT,
                    last_pull_at REAL
                );
                CREATE TABLE cairn_resync (collection TEXT NOT NULL, record_id TEXT NOT NULL, PRIMARY KEY (collection, record_id)) WITHOUT ROWID;
                CREATE TABLE cairn_queue (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    op_id TEXT NOT NULL UNIQUE,
                    collection TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    op TEXT NOT NULL,
                    base_version INTEGER,
                    data TEXT,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    created_at REAL NOT NULL,
                    waits_for TEXT
                );
                CREATE INDEX cairn_queue_record ON cairn_queue(collection, record_id);
                CREATE INDEX cairn_queue_waits ON cairn_queue(waits_for) WHERE waits_for IS NOT NULL;
                CREATE TABLE cairn_shadow (
                    collection TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    base_version INTEGER,
                    base_data TEXT,
                    base_deleted INTEGER NOT NULL DEFAULT 1,
                    server_version INTEGER,
                    server_data TEXT,
                    server_deleted INTEGER NOT NULL DEFAULT 1,
                    PRIMARY KEY (collection, record_id)
                ) WITHOUT ROWID;
                CREATE TABLE cairn_failed (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    op_id TEXT NOT NULL,
                    collection TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    op TEXT NOT NULL,
                    base_version INTEGER,
                    data TEXT,
                    error_code TEXT NOT NULL,
                    error_message TEXT NOT NULL,
                    failed_at REAL NOT NULL
                );
                CREATE INDEX cairn_failed_record ON cairn_failed(collection, record_id);
                CREATE TABLE cairn_conflicts (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    collection TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    base TEXT,
                    local TEXT,
                    server TEXT,
                    server_version INTEGER NOT NULL DEFAULT 0,
                    resolution TEXT NOT NULL,
                    resolved TEXT,
                    resolved_at REAL NOT NULL
                );
                CREATE TABLE cairn_events (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    kind TEXT NOT NULL,
                    started_at REAL NOT NULL,
                    ended_at REAL,
                    pushed INTEGER NOT NULL DEFAULT 0,
                    pulled INTEGER NOT NULL DEFAULT 0,
                    conflicts INTEGER NOT NULL DEFAULT 0,
                    failed INTEGER NOT NULL DEFAULT 0,
                    error TEXT
                );
                """)
        }
        migrator.registerMigration("v2-attempts-apart") { db in
            // Marking a batch attempted used to rewrite each queued row with its payload; a small table of its own
            // makes that a few pages.
            try db.execute(sql: """
                CREATE TABLE cairn_attempts (seq INTEGER PRIMARY KEY NOT NULL, count INTEGER NOT NULL);
                INSERT INTO cairn_attempts (seq, count) SELECT seq, attempts FROM cairn_queue WHERE attempts > 0;
                ALTER TABLE cairn_queue DROP COLUMN attempts;
                CREATE TRIGGER cairn_queue_forget_attempts AFTER DELETE ON cairn_queue
                BEGIN DELETE FROM cairn_attempts WHERE seq = old.seq; END;
                """)
        }
        return migrator
    }
}
