/// A table of the server's state as every backend keeps it: its columns in order, the leading `keyCount` of them its
/// primary key. ``all`` lists every table a server's state lives in, so that a copy between any two backends
/// (``ServerStorage/exportRows(of:after:limit:)`` and ``ServerStorage/importRows(_:into:)``) moves all of it; each
/// backend's conformance test checks that the list matches the tables and columns of its schema, so a table added
/// to a backend's migrations without being added here fails the tests.
///
/// ```swift
/// var after: StorageRow?
/// repeat {
///     let rows = try await source.exportRows(of: .users, after: after, limit: 500)
///     try await target.importRows(rows, into: .users)
///     after = rows.last.map(StorageTable.users.key(of:))
/// } while after != nil
/// ```
public struct StorageTable: Sendable, Hashable, CustomStringConvertible {
    /// The table's name, the same in every backend.
    public let name: String
    /// Its columns, key first.
    public let columns: [StorageColumn]
    /// How many leading columns make its primary key.
    public let keyCount: Int

    init(_ name: String, key: [StorageColumn], _ others: [StorageColumn]) {
        self.name = name
        self.columns = key + others
        self.keyCount = key.count
    }

    /// The name.
    public var description: String { name }
    /// The key of `row` (a row of this table), where the next page starts after.
    public func key(of row: StorageRow) -> StorageRow { Array(row.prefix(keyCount)) }
    /// The position of the column named `name`.
    public func index(of name: String) -> Int? { columns.firstIndex { $0.name == name } }

    /// Every table of a server's state, in an order foreign keys accept (a table after those it refers to).
    public static let all: [StorageTable] = [
        .users, .projects, .members, .tokens, .records, .collectionState, .operations, .clients, .files, .fileLimits,
        .signInRevocations, .readScopes, .recordHistory, .serverSecrets, .clientDiagnostics, .backups, .schemaVersions,
        .serviceKeys, .webhooks, .actionCalls,
    ]

    /// Accounts and their password hashes.
    public static let users = StorageTable(
        "users", key: [.text("name")], [.text("password_hash"), .real("created_at"), .boolean("operator")])
    /// Projects: schema, head version.
    public static let projects = StorageTable(
        "projects", key: [.text("name")], [.text("schema_json"), .integer("head_version"), .real("created_at")])
    /// Roles of users in projects.
    public static let members = StorageTable(
        "members", key: [.text("project"), .text("user")], [.text("role"), .text("claims")])
    /// Access and refresh tokens (their hashes).
    public static let tokens = StorageTable(
        "tokens", key: [.text("hash")],
        [.text("kind"), .text("user"), .text("family"), .real("expires_at"), .boolean("revoked"), .boolean("used")])
    /// Records and tombstones at their latest version.
    public static let records = StorageTable(
        "records", key: [.text("project"), .text("collection"), .text("id")],
        [
            .integer("version"), .text("updated_at"), .text("updated_by"), .real("changed_at"), .boolean("deleted"), .text("data"),
            .text("field_versions"), .integer("prior_version", optional: true), .text("prior_data", optional: true),
            .text("rule_data", optional: true),
        ])
    /// Per collection, the highest tombstone version purged.
    public static let collectionState = StorageTable(
        "collection_state", key: [.text("project"), .text("collection")], [.integer("purged_through"), .integer("history_through")])
    /// Remembered operation results, for idempotent replays.
    public static let operations = StorageTable(
        "operations", key: [.text("project"), .text("op_id")],
        [.text("fingerprint"), .text("result"), .real("created_at"), .text("tag", optional: true)])
    /// Registered clients and how far they pulled.
    public static let clients = StorageTable(
        "clients", key: [.text("id")],
        [
            .text("project"), .text("user"), .text("device", optional: true), .text("app", optional: true), .real("created_at"),
            .integer("last_pulled_version"), .real("last_seen"),
        ])
    /// The latest diagnostics report each client uploaded.
    public static let clientDiagnostics = StorageTable(
        "client_diagnostics", key: [.text("client_id")], [.text("project"), .real("uploaded_at"), .text("report")])
    /// Files' metadata (their bytes live in a ``BlobStore``).
    public static let files = StorageTable(
        "files", key: [.text("project"), .text("id")],
        [
            .text("name"), .text("content_type"), .integer("size"), .text("sha256", optional: true), .text("status"), .text("tags"),
            .boolean("public"), .real("created_at"), .real("updated_at"), .text("created_by"), .text("attach_to", optional: true),
            .integer("attached_version", optional: true), .real("expires_at", optional: true), .text("source", optional: true),
            .text("permissions", optional: true),
        ])
    /// When each user's sign-ins were last revoked (any user name: identity providers' users too).
    public static let signInRevocations = StorageTable(
        "sign_in_revocations", key: [.text("user")], [.real("revoked_at")])
    /// The states changes replaced (``RecordPriorState``), until the purge's horizon.
    public static let recordHistory = StorageTable(
        "record_history", key: [.text("project"), .text("collection"), .text("id"), .integer("version")],
        [.text("data", optional: true), .integer("superseded_version"), .real("superseded_at")])
    /// Secrets the server made once (the key that signs cursors): copied, so cursors stay valid on the new backend.
    public static let serverSecrets = StorageTable("server_secrets", key: [.text("name")], [.text("value")])
    /// Read filters named by the fingerprints cursors carry.
    public static let readScopes = StorageTable("read_scopes", key: [.text("fingerprint")], [.text("filter")])
    /// Backups of a data directory (``ServerBackup``), for operators to see when the last was made.
    public static let backups = StorageTable(
        "backups", key: [.real("created_at"), .text("path")], [.integer("database_bytes"), .integer("file_count")])
    /// Every numbered schema of each project, with the progress of the migration to it (``StoredSchemaVersion``).
    public static let schemaVersions = StorageTable(
        "schema_versions", key: [.text("project"), .integer("number")],
        [
            .text("schema_json"), .real("created_at"), .text("migration_state"), .integer("migration_through", optional: true),
            .integer("migration_cursor"), .integer("migrated"),
        ])
    /// Keys other systems sign in with (``StoredServiceKey``; only their hashes).
    public static let serviceKeys = StorageTable(
        "service_keys", key: [.text("project"), .text("name")],
        [.text("role"), .text("key_hash"), .real("created_at"), .real("last_used_at", optional: true)])
    /// Webhooks with their outbox cursor, delivery state and lease (``StoredWebhook``).
    public static let webhooks = StorageTable(
        "webhooks", key: [.text("project"), .text("name")],
        [
            .text("url"), .text("collections"), .text("secret"), .real("created_at"), .integer("cursor"), .integer("delivered"),
            .integer("failures"), .real("failing_since", optional: true), .text("last_error", optional: true),
            .real("last_attempt_at", optional: true), .real("last_success_at", optional: true),
            .real("next_attempt_at", optional: true), .text("lease_owner", optional: true), .real("lease_until", optional: true),
        ])
    /// Answers of actions called through the server, by idempotency key (``StoredActionCall``).
    public static let actionCalls = StorageTable(
        "action_calls", key: [.text("project"), .text("idempotency_key")],
        [.text("action"), .text("caller"), .integer("status"), .text("answer"), .real("completed_at")])
    /// Projects' own file limits.
    public static let fileLimits = StorageTable(
        "file_limits", key: [.text("project")],
        [.integer("maximum_file_bytes", optional: true), .integer("maximum_project_bytes", optional: true)])
}

/// A column of a ``StorageTable``: its name and the kind of its values.
public struct StorageColumn: Sendable, Hashable {
    /// The column's name, the same in every backend.
    public let name: String
    /// The kind of its values.
    public let kind: StorageValue.Kind
    /// Whether it may hold ``StorageValue/null``.
    public let optional: Bool

    static func text(_ name: String, optional: Bool = false) -> Self { Self(name: name, kind: .text, optional: optional) }
    static func integer(_ name: String, optional: Bool = false) -> Self { Self(name: name, kind: .integer, optional: optional) }
    static func real(_ name: String, optional: Bool = false) -> Self { Self(name: name, kind: .real, optional: optional) }
    static func boolean(_ name: String, optional: Bool = false) -> Self { Self(name: name, kind: .boolean, optional: optional) }
}

/// One value of a ``StorageRow``, as any backend can read and write it.
public enum StorageValue: Sendable, Hashable {
    /// No value (an optional column).
    case null
    /// Text.
    case text(String)
    /// A 64-bit integer.
    case integer(Int64)
    /// A double (epoch seconds).
    case real(Double)
    /// A boolean (SQLite keeps 0 or 1).
    case boolean(Bool)

    /// What a column holds.
    public enum Kind: Sendable, Hashable {
        /// ``StorageValue/text(_:)``.
        case text
        /// ``StorageValue/integer(_:)``.
        case integer
        /// ``StorageValue/real(_:)``.
        case real
        /// ``StorageValue/boolean(_:)``.
        case boolean
    }
}

/// A row of a ``StorageTable``: one value per column, in the table's column order.
public typealias StorageRow = [StorageValue]
