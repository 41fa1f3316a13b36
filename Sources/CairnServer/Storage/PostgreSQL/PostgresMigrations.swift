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
    ]

    /// Applies every migration the database lacks, in one transaction under the advisory lock; returns the versions
    /// this call applied (none when another instance got there first).
    @discardableResult
    static func migrate(_ client: PostgresClient, logger: Logger) async throws -> [Int] {
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
    static func appliedVersions(_ client: PostgresClient, logger: Logger) async throws -> [Int] {
        var versions: [Int] = []
        for try await version in try await client.query("SELECT version FROM cairn_migrations ORDER BY version", logger: logger).decode(Int.self) {
            versions.append(version)
        }
        return versions
    }
}
