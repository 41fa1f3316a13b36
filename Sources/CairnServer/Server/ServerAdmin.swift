import CairnProtocol
import Foundation

/// Manages a server's accounts, projects, members and schemas directly in its storage, with no server running:
/// what `cairn admin` does. The HTTP schema route uses the same ``ServerAdmin/setSchema(project:_:)``.
///
/// ```swift
/// let admin = ServerAdmin(storage: try SQLiteStorage(path: path))
/// try await admin.addProject("field")
/// try await admin.addUser("alice", password: "s3cret-pass")
/// try await admin.grant(user: "alice", project: "field", role: .writer)
/// ```
public struct ServerAdmin: Sendable {
    /// The storage every change goes to directly (the server's own, or one opened by `cairn admin --data`).
    public let storage: any ServerStorage
    let hasher: PasswordHasher
    let clock: any WallClock
    /// The schema histories the server's sync layer reads (the server's own, so a new schema is seen at once).
    let evolution: SchemaEvolution
    /// The running server's live listeners, told of records a schema migration rewrites; `nil` with no server.
    let notifier: ChangeNotifier?
    /// How the server delivers webhooks, for the status their summaries report (the defaults with no server).
    var webhookSettings = WebhookSettings()

    /// An admin over `storage`. `bcryptCost` hashes new passwords (clamped to 4...31); `clock` stamps new projects.
    public init(storage: any ServerStorage, bcryptCost: UInt8 = 10, clock: any WallClock = SystemWallClock()) {
        self.init(storage: storage, bcryptCost: bcryptCost, clock: clock, evolution: SchemaEvolution(storage: storage, clock: clock))
    }

    init(storage: any ServerStorage, bcryptCost: UInt8, clock: any WallClock, evolution: SchemaEvolution, notifier: ChangeNotifier? = nil) {
        self.storage = storage
        self.notifier = notifier
        self.hasher = PasswordHasher(cost: bcryptCost)
        self.clock = clock
        self.evolution = evolution
    }

    /// Creates a project with an empty schema.
    public func addProject(_ name: String) async throws {
        guard Names.isValidProjectName(name) else {
            throw ErrorBody.validation("project name \"\(name)\" must match ^[a-z][a-z0-9_]{0,62}$", field: "name")
        }
        try await storage.createProject(name: name, now: clock.now())
    }

    /// Creates a user with a password (at least 8 characters).
    public func addUser(_ name: String, password: String) async throws {
        guard Names.isValidID(name) else {
            throw ErrorBody.validation("user name \"\(name)\" must be 1-128 characters of [A-Za-z0-9_.:-]", field: "name")
        }
        guard !name.hasPrefix(ServiceKeySignIn.userPrefix) else {
            throw ErrorBody.validation("user names starting with service: are the service keys' (cairn admin add-service-key)", field: "name")
        }
        try Self.checkPassword(password)
        try await storage.createUser(name: name, passwordHash: hasher.hash(password))
    }

    /// Replaces a user's password.
    public func setPassword(_ name: String, password: String) async throws {
        try Self.checkPassword(password)
        try await storage.setPasswordHash(user: name, passwordHash: hasher.hash(password))
    }

    /// Gives a user a role in a project.
    public func grant(user: String, project: String, role: Role) async throws {
        try await storage.grant(user: user, project: project, role: role)
    }

    /// Sets the claims data rules read as `claims.NAME` for a member who signs in with a Cairn password (an
    /// identity provider's token brings its own); `{}` clears them. `not_found` when `user` is not a member.
    ///
    /// ```swift
    /// try await admin.setClaims(user: "ana", project: "field", ["regions": ["north", "east"]])
    /// ```
    public func setClaims(user: String, project: String, _ claims: [String: JSONValue]) async throws {
        for name in claims.keys where !RuleParameter.isValidClaimName(name) {
            throw ErrorBody.validation("claim name \"\(name)\" must be 1 to 128 characters without control characters", field: name)
        }
        guard JSONValue.object(claims).jsonText().utf8.count <= 64 * 1024 else {
            throw ErrorBody.validation("claims may hold at most 64 KiB of JSON", field: "claims")
        }
        try await storage.setClaims(user: user, project: project, claims: claims)
    }

    /// The claims set for a member (`{}` when none); `not_found` when `user` is not a member.
    public func claims(user: String, project: String) async throws -> [String: JSONValue] {
        guard let claims = try await storage.claims(user: user, project: project) else {
            throw ClaimsColumn.notMember(user: user, project: project)
        }
        return claims
    }

    /// Why `user` can or cannot read and write record `id` of `collection`: the rule and conditions that decide,
    /// with the user's role and claims. `role` and `claims` replace the stored ones, to explain for an
    /// identity-provider user whose token carries them.
    ///
    /// ```swift
    /// let why = try await admin.explain(project: "field", user: "ana", collection: "jobs", id: "j-1")
    /// ```
    public func explain(
        project: String, user: String, collection: String, id: String, role: Role? = nil, claims: [String: JSONValue]? = nil
    ) async throws -> RuleExplanation {
        guard let schema = try await storage.schema(project: project) else {
            throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
        }
        guard let collectionSchema = schema.collection(named: collection) else {
            throw ErrorBody(code: .notFound, message: "collection \"\(collection)\" is not in the schema of \(project)")
        }
        guard Names.isValidID(id) else { throw ErrorBody.validation("id is not a valid record id", field: "id") }
        let stored = try await AccessControl(storage: storage).member(user, in: project)?.role
        let subject = (role ?? stored).map { RuleSubject(user: user, role: $0, claims: [:]) }
        var bound = subject
        if bound != nil {
            if let claims {
                bound?.claims = claims
            } else {
                bound?.claims = try await storage.claims(user: user, project: project) ?? [:]
            }
        }
        let row = try await storage.liveRow(project: project, collection: collectionSchema, id: id)
        // The records it names, which rules that follow a reference (`site.region`) read.
        var referenced: [String: [String: String]] = [:]
        if let row, let data = (try? JSONValue(parsing: Data(row.dataText.utf8)))?.objectValue {
            referenced = try await FollowedReference.records(namedBy: data, in: collectionSchema, project: project, storage: storage)
        }
        var explanation = try RuleExplainer(evaluator: try RecordFilterEvaluator.shared()).explain(
            collection: collectionSchema, id: id, row: row, subject: bound, referenced: referenced)
        explanation.user = user
        return explanation
    }

    /// Sets `schema` as the project's next numbered schema when the change is additive, or breaking with migration
    /// steps (`migrations`) that cover every breaking change; returns the stored schema with its version and number.
    /// The same schema again (with or without the steps that made it) changes nothing but a new
    /// ``Schema/minimumSchemaVersion``, which is kept until changed. With
    /// `migrate`, the stored records are migrated before it returns (``migrate(project:)``); otherwise call that.
    /// Throws `validation_failed`, `incompatible_schema` (naming what is missing) or `not_found`.
    ///
    /// ```swift
    /// var next = current
    /// next.collections[0].fields[0].name = "rating"
    /// next.migrations = [SchemaMigration(collection: "jobs", step: .rename(from: "score", to: "rating"))]
    /// try await admin.setSchema(project: "field", next)
    /// ```
    @discardableResult
    public func setSchema(project: String, _ schema: Schema, migrate: Bool = true) async throws -> Schema {
        try schema.validate()
        try RuleValidation.check(schema)
        if !storage.supportsTableCollections, let collection = schema.collections.first(where: { $0.table != nil }) {
            throw ErrorBody.validation(
                "collection \(collection.name) names a table (\(collection.table ?? "")): collections in tables of their own need the "
                    + "PostgreSQL backend (cairn serve --postgres URL); this server keeps its data in SQLite", field: "table")
        }
        guard let current = try await storage.schema(project: project) else {
            throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
        }
        var stamped = SchemaVersioning.stamped(schema)
        // The schema set already (a deploy sending its file again, its steps included) changes nothing.
        let unchanged = stamped.version == current.version && (schema.migrations.isEmpty || schema.migrations == current.migrations)
        if !unchanged, let refusal = try SchemaClassifier.diff(from: current, to: schema).refusal { throw refusal }
        stamped.number = unchanged ? current.number : current.number + 1
        stamped.minimumSchemaVersion = schema.minimumSchemaVersion ?? current.minimumSchemaVersion
        if let minimum = stamped.minimumSchemaVersion, !(0...stamped.number).contains(minimum) {
            throw ErrorBody.validation("minimumSchemaVersion must be from 0 to the schema's number, \(stamped.number)", field: "minimumSchemaVersion")
        }
        if unchanged {
            stamped.migrations = current.migrations
            if stamped.minimumSchemaVersion != current.minimumSchemaVersion {
                try await storage.setSchema(project: project, schema: stamped, now: clock.now(), replacing: current.version)
                evolution.forget(project: project)
            }
            return stamped
        }
        try await storage.setSchema(project: project, schema: stamped, now: clock.now(), replacing: current.version)
        evolution.forget(project: project)
        // Records keep the values their rules read beside them: when the rules read other fields, rewrite those.
        for collection in stamped.collections {
            let fields = RuleFields.names(collection)
            if fields != current.collection(named: collection.name).map(RuleFields.names) ?? [] {
                try await storage.refreshRuleData(project: project, collection: collection.name, fields: fields)
            }
        }
        if migrate && !stamped.migrations.isEmpty { try await self.migrate(project: project) }
        return stamped
    }

    /// What setting `schema` on the project would change, and whether it is breaking; `validation_failed` for a
    /// malformed schema or a migration step that does not fit the current schema.
    public func schemaDiff(project: String, _ schema: Schema) async throws -> SchemaDiff {
        try schema.validate()
        guard let current = try await storage.schema(project: project) else {
            throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
        }
        return try SchemaClassifier.diff(from: current, to: schema)
    }

    /// Every numbered schema of the project with its migration's progress, oldest first.
    public func schemaVersions(project: String) async throws -> [StoredSchemaVersion] {
        guard try await storage.schema(project: project) != nil else {
            throw ErrorBody(code: .notFound, message: "project \"\(project)\" does not exist")
        }
        return try await storage.schemaVersions(project: project)
    }

    /// Migrates the project's stored records by the declared steps of its unfinished migrations, in pages, to the
    /// end (a migration cut short resumes); returns how many records were rewritten. On a running server each page
    /// reaches the live listeners as it commits.
    @discardableResult
    public func migrate(project: String) async throws -> Int64 {
        try await SchemaMigrator(storage: storage, evolution: evolution, clock: clock, commits: RecordCommits(storage: storage, notifier: notifier))
            .run(project: project)
    }

    /// Sets a project's own file limits (a `nil` value falls back to the server's configuration); sizes must not
    /// be negative.
    ///
    /// ```swift
    /// try await admin.setFileLimits(project: "field", FileLimits(maximumFileBytes: 50 << 20, maximumProjectBytes: 5 << 30))
    /// ```
    public func setFileLimits(project: String, _ limits: FileLimits) async throws {
        for (value, field) in [(limits.maximumFileBytes, "maximumFileBytes"), (limits.maximumProjectBytes, "maximumProjectBytes")] {
            if let value, value < 0 { throw ErrorBody.validation("\(field) may not be negative", field: field) }
        }
        try await storage.setFileLimits(project: project, limits: limits)
    }

    /// A project's own file limits (`nil` values: the server's configuration applies).
    public func fileLimits(project: String) async throws -> FileLimits { try await storage.fileLimits(project: project) }

    static func checkPassword(_ password: String) throws {
        guard password.count >= 8, password.utf8.count <= 72 else {
            throw ErrorBody.validation("a password needs 8 to 72 bytes", field: "password")
        }
    }
}
