import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    /// Inserts the project with the stamped empty schema and head version 0; a taken name is `already_exists`.
    public func createProject(name: String, now: Date) async throws {
        let empty = Schema(collections: [])
        let schemaText = try String(decoding: CairnJSON.encode(SchemaVersioning.stamped(empty)), as: UTF8.self)
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM projects WHERE name = ?", arguments: [name]) == nil else {
                throw ErrorBody(code: .alreadyExists, message: "project \"\(name)\" already exists")
            }
            try db.execute(
                sql: "INSERT INTO projects (name, schema_json, created_at) VALUES (?, ?, ?)",
                arguments: [name, schemaText, now.epochSeconds])
            try Self.keepSchemaVersion(db, project: name, number: 0, text: schemaText, progress: MigrationProgress(state: .none), now: now)
        }
    }

    /// Checks the user and project exist, then inserts the membership or replaces its role.
    public func grant(user: String, project: String, role: Role) async throws {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE name = ?", arguments: [user]) != nil else {
                throw ErrorBody(code: .notFound, message: "user \"\(user)\" does not exist")
            }
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM projects WHERE name = ?", arguments: [project]) != nil else {
                throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
            }
            try db.execute(
                sql: "INSERT INTO members (project, user, role) VALUES (?, ?, ?) ON CONFLICT (project, user) DO UPDATE SET role = excluded.role",
                arguments: [project, user, role.rawValue])
        }
    }

    /// Reads the membership from a WAL snapshot; an unknown project or user is `nil` too.
    public func role(user: String, project: String) async throws -> Role? {
        try lookUp { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT role FROM members WHERE project = ? AND user = ?"), arguments: [project, user])
                .flatMap(Role.init(rawValue:))
        }
    }

    /// Reads the user's memberships ordered by project name; an unknown user has none.
    public func memberships(user: String) async throws -> [ProjectMembership] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT project, role FROM members WHERE user = ? ORDER BY project", arguments: [user])
                .compactMap { row in Role(rawValue: row["role"]).map { ProjectMembership(name: row["project"], role: $0) } }
        }
    }

    /// Reads the stored schema JSON and decodes it only when its text changed since the last read (cached per project).
    public func schema(project: String) async throws -> Schema? {
        let text = try lookUp { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT schema_json FROM projects WHERE name = ?"), arguments: [project])
        }
        guard let text else { return nil }
        // Every pull and batch asks; decode only when the stored text changed (the admin tool may change it).
        if let cached = decodedSchemas.withLock({ $0[project] }), cached.text == text { return cached.schema }
        let schema = try CairnJSON.decode(Schema.self, from: Array(text.utf8))
        decodedSchemas.withLock { $0[project] = (text, schema) }
        return schema
    }

    /// Stores the schema as JSON text in the project's row and as its numbered version, in one transaction; no
    /// project row changed is `not_found`.
    public func setSchema(project: String, schema: Schema, now: Date, replacing currentVersion: String?) async throws {
        let text = String(decoding: try CairnJSON.encode(schema), as: UTF8.self)
        try await write { db in
            if let currentVersion {
                // Writes are serialized: what this transaction reads stays until it commits.
                let stored = try String.fetchOne(db, sql: "SELECT json_extract(schema_json, '$.version') FROM projects WHERE name = ?", arguments: [project])
                if let stored, stored != currentVersion { throw Self.schemaChangedMeanwhile(project) }
            }
            try db.execute(sql: "UPDATE projects SET schema_json = ? WHERE name = ?", arguments: [text, project])
            guard db.changesCount == 1 else { throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist") }
            try Self.keepSchemaVersion(db, project: project, number: schema.number, text: text, progress: .initial(for: schema), now: now)
        }
    }

    /// Inserts a numbered version, or replaces the schema of one kept already (its progress stays).
    private static func keepSchemaVersion(
        _ db: Database, project: String, number: Int, text: String, progress: MigrationProgress, now: Date
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO schema_versions (project, number, schema_json, created_at, migration_state, migration_cursor, migrated)
                VALUES (?, ?, ?, ?, ?, 0, 0)
                ON CONFLICT (project, number) DO UPDATE SET schema_json = excluded.schema_json
                """,
            arguments: [project, number, text, now.epochSeconds, progress.state.rawValue])
    }

    /// Reads every version of the project by number.
    public func schemaVersions(project: String) async throws -> [StoredSchemaVersion] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT schema_json, created_at, migration_state, migration_through, migration_cursor, migrated
                    FROM schema_versions WHERE project = ? ORDER BY number
                    """,
                arguments: [project]
            ).map { row in
                let text: String = row[0]
                return StoredSchemaVersion(
                    schema: try CairnJSON.decode(Schema.self, from: Array(text.utf8)), createdAt: Date(timeIntervalSince1970: row[1]),
                    migration: MigrationProgress(
                        state: MigrationProgress.State(rawValue: row[2]) ?? .pending, through: row[3], cursor: row[4], migrated: row[5]))
            }
        }
    }

    /// Updates the version's progress columns.
    public func setMigrationProgress(project: String, number: Int, _ progress: MigrationProgress) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE schema_versions SET migration_state = ?, migration_through = ?, migration_cursor = ?, migrated = ?
                    WHERE project = ? AND number = ?
                    """,
                arguments: [progress.state.rawValue, progress.through, progress.cursor, progress.migrated, project, number])
        }
    }
}
