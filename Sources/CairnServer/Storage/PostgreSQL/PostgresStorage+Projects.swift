import CairnProtocol
import Foundation
import Logging
import PostgresNIO

extension PostgresStorage {
    /// Inserts the project with the stamped empty schema and head version 0; a taken name is `already_exists`.
    public func createProject(name: String, now: Date) async throws {
        let schemaText = try String(decoding: CairnJSON.encode(SchemaVersioning.stamped(Schema(collections: []))), as: UTF8.self)
        do {
            try await Self.transaction(client, logger: logger) { connection in
                try await connection.query(
                    "INSERT INTO projects (name, schema_json, created_at) VALUES (\(name), \(schemaText), \(now.epochSeconds))", logger: logger)
                try await Self.keepSchemaVersion(
                    connection, project: name, number: 0, text: schemaText, progress: MigrationProgress(state: .none), now: now, logger: logger)
            }
        } catch let error where Self.isUniqueViolation(error) {
            throw ErrorBody(code: .alreadyExists, message: "project \"\(name)\" already exists")
        }
    }

    /// Checks the user and project exist, then inserts the membership or replaces its role, in one transaction.
    public func grant(user: String, project: String, role: Role) async throws {
        try await Self.transaction(client, logger: logger) { connection in
            guard try await Self.exists(connection, "SELECT 1 FROM users WHERE name = \(user)", logger: logger) else {
                throw ErrorBody(code: .notFound, message: "user \"\(user)\" does not exist")
            }
            guard try await Self.exists(connection, "SELECT 1 FROM projects WHERE name = \(project)", logger: logger) else {
                throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
            }
            try await connection.query(
                """
                INSERT INTO members (project, "user", role) VALUES (\(project), \(user), \(role.rawValue))
                ON CONFLICT (project, "user") DO UPDATE SET role = excluded.role
                """, logger: logger)
        }
    }

    /// The membership's role; an unknown project or user is nil too.
    public func role(user: String, project: String) async throws -> Role? {
        let rows = try await client.query("SELECT role FROM members WHERE project = \(project) AND \"user\" = \(user)", logger: logger)
        for try await role in rows.decode(String.self) { return Role(rawValue: role) }
        return nil
    }

    /// The user's memberships ordered by project name; an unknown user has none.
    public func memberships(user: String) async throws -> [ProjectMembership] {
        let rows = try await client.query("SELECT project, role FROM members WHERE \"user\" = \(user) ORDER BY project", logger: logger)
        var memberships: [ProjectMembership] = []
        for try await (project, role) in rows.decode((String, String).self) {
            if let role = Role(rawValue: role) { memberships.append(ProjectMembership(name: project, role: role)) }
        }
        return memberships
    }

    /// The stored schema, or nil for an unknown project.
    public func schema(project: String) async throws -> Schema? {
        let rows = try await client.query("SELECT schema_json FROM projects WHERE name = \(project)", logger: logger)
        for try await text in rows.decode(String.self) { return try CairnJSON.decode(Schema.self, from: Array(text.utf8)) }
        return nil
    }

    /// Stores the schema as JSON text in the project's row and as its numbered version, in one transaction; an
    /// unknown project is `not_found`.
    public func setSchema(project: String, schema: Schema, now: Date, replacing currentVersion: String?) async throws {
        let text = String(decoding: try CairnJSON.encode(schema), as: UTF8.self)
        try await Self.transaction(client, logger: logger) { connection in
            // The row stays locked until the transaction ends: a concurrent change waits, then finds a new version.
            let stored = try await connection.query("SELECT schema_json FROM projects WHERE name = \(project) FOR UPDATE", logger: logger)
            let previous = try await stored.decode(String.self).first(where: { _ in true })
                .map { try CairnJSON.decode(Schema.self, from: Array($0.utf8)) }
            if let currentVersion, let previous, previous.version != currentVersion {
                throw Self.schemaChangedMeanwhile(project)
            }
            let rows = try await connection.query(
                "UPDATE projects SET schema_json = \(text) WHERE name = \(project) RETURNING name", logger: logger)
            guard try await rows.decode(String.self).first(where: { _ in true }) != nil else {
                throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
            }
            try await Self.keepSchemaVersion(
                connection, project: project, number: schema.number, text: text, progress: .initial(for: schema), now: now, logger: logger)
            if ([schema] + (previous.map { [$0] } ?? [])).contains(where: { $0.collections.contains { $0.table != nil } }) {
                do {
                    try await applyTableCollections(connection, project: project, previous: previous, schema: schema, logger: logger)
                } catch let error as PSQLError {
                    throw ErrorBody.validation("cannot prepare the tables of \(project)'s collections: \(Self.describe(error))", field: "table")
                }
            }
        }
    }

    /// Inserts a numbered version, or replaces the schema of one kept already (its progress stays).
    private static func keepSchemaVersion(
        _ connection: PostgresConnection, project: String, number: Int, text: String, progress: MigrationProgress, now: Date, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO schema_versions (project, number, schema_json, created_at, migration_state, migration_cursor, migrated)
            VALUES (\(project), \(Int64(number)), \(text), \(now.epochSeconds), \(progress.state.rawValue), 0, 0)
            ON CONFLICT (project, number) DO UPDATE SET schema_json = excluded.schema_json
            """, logger: logger)
    }

    /// Every version of the project by number.
    public func schemaVersions(project: String) async throws -> [StoredSchemaVersion] {
        let rows = try await client.query(
            """
            SELECT schema_json, created_at, migration_state, migration_through, migration_cursor, migrated
            FROM schema_versions WHERE project = \(project) ORDER BY number
            """, logger: logger)
        var versions: [StoredSchemaVersion] = []
        for try await (text, created, state, through, cursor, migrated) in rows.decode((String, Double, String, Int64?, Int64, Int64).self) {
            versions.append(StoredSchemaVersion(
                schema: try CairnJSON.decode(Schema.self, from: Array(text.utf8)), createdAt: Date(timeIntervalSince1970: created),
                migration: MigrationProgress(state: MigrationProgress.State(rawValue: state) ?? .pending, through: through, cursor: cursor, migrated: migrated)))
        }
        return versions
    }

    /// Updates the version's progress columns.
    public func setMigrationProgress(project: String, number: Int, _ progress: MigrationProgress) async throws {
        try await client.query(
            """
            UPDATE schema_versions SET migration_state = \(progress.state.rawValue), migration_through = \(progress.through),
                migration_cursor = \(progress.cursor), migrated = \(progress.migrated)
            WHERE project = \(project) AND number = \(Int64(number))
            """, logger: logger)
    }

    /// Whether `query` returns a row, on `connection`.
    static func exists(_ connection: PostgresConnection, _ query: PostgresQuery, logger: Logger) async throws -> Bool {
        try await connection.query(query, logger: logger).decode(Int.self).first(where: { _ in true }) != nil
    }
}
