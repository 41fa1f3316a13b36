import CairnProtocol
import Foundation
import ServiceLifecycle

/// What the server keeps, as primitives any SQL engine can offer: accounts, tokens, projects, a project's write
/// transaction over its records and remembered operations, ranges of the changes feed, and files' metadata
/// (``FileCatalog``; their bytes live in a ``BlobStore``). The rules on top of
/// them (batches, idempotency, conflict policies, cursors, expiry) live once, in the sync layer (``BatchPlanner``
/// and the server's `BatchService` and `ChangesFeed`), so a second backend implements only this protocol and passes
/// the same conformance suite.
///
/// A storage is a `Service`: the server runs it next to its HTTP listener, and its `run()` returns (closing the
/// backend) at graceful shutdown. It is usable right after `init`, without running, as the admin tool does.
///
/// Backends must keep the changes feed gap-free: a version becomes visible to readers only after every lower
/// version of its project is, which ``withProjectWriteTransaction(project:_:)`` gives by holding the project's
/// write lock from reading the head version to committing.
///
/// ```swift
/// let storage = try SQLiteStorage(path: path)
/// let head = try await storage.withProjectWriteTransaction(project: "field") { transaction in
///     .commit(try await transaction.headVersion())
/// }
/// ```
public protocol ServerStorage: Service, FileCatalog, IntegrationStorage, ActionCallStorage {
    // MARK: Accounts

    /// Creates a user; `already_exists` if the name is taken.
    func createUser(name: String, passwordHash: String) async throws
    /// Replaces a user's password hash; `not_found` for an unknown user.
    func setPasswordHash(user: String, passwordHash: String) async throws
    /// The user named `name`.
    func user(named name: String) async throws -> StoredUser?

    // MARK: Tokens

    /// Stores a new token (only its hash).
    func insertToken(_ token: StoredToken) async throws
    /// The token with this hash, revoked or not.
    func token(hash: String) async throws -> StoredToken?
    /// Marks a refresh token used; returns false when it already was (reuse: the caller revokes the family).
    func consumeRefreshToken(hash: String) async throws -> Bool
    /// Revokes every token of a family.
    func revokeTokenFamily(_ family: String) async throws

    // MARK: Projects and members

    /// Creates a project with an empty schema and head version 0; `already_exists` if taken.
    func createProject(name: String, now: Date) async throws
    /// Gives `user` a role in `project` (replacing any other); `not_found` for an unknown user or project.
    func grant(user: String, project: String, role: Role) async throws
    /// The role `user` holds in `project`, or `nil` when not a member.
    func role(user: String, project: String) async throws -> Role?
    /// Every project of `user`, with roles, by project name.
    func memberships(user: String) async throws -> [ProjectMembership]
    /// The claims an operator set for `user` in `project` (`{}` when none were set); `nil` when not a member.
    func claims(user: String, project: String) async throws -> [String: JSONValue]?
    /// Replaces the claims of a member (`{}` clears them); `not_found` when `user` is not a member of `project`.
    func setClaims(user: String, project: String, claims: [String: JSONValue]) async throws
    /// The project's schema (with its version), or `nil` for an unknown project.
    func schema(project: String) async throws -> Schema?
    /// Replaces the project's schema (already checked, version and number already set) and keeps it as its numbered
    /// version `schema.number` (replacing that version's schema when it is kept already, as when only the minimum
    /// version changes), in one transaction; `not_found` for an unknown project. With `replacing`, only while the
    /// stored schema still has that version: another admin's change in between answers `conflict`, so two schemas
    /// set at the same moment never both take the same number.
    func setSchema(project: String, schema: Schema, now: Date, replacing currentVersion: String?) async throws
    /// Every numbered schema of `project` with its migration's progress, by number (none for an unknown project).
    func schemaVersions(project: String) async throws -> [StoredSchemaVersion]
    /// Stores the progress of the migration to schema `number` of `project`.
    func setMigrationProgress(project: String, number: Int, _ progress: MigrationProgress) async throws

    // MARK: Records

    /// Runs `body` in one transaction holding `project`'s write lock: writers of one project run one at a time,
    /// so versions handed out inside commit in order. `.commit` keeps the writes, `.rollback` (or a thrown error)
    /// discards every one of them.
    func withProjectWriteTransaction<T: Sendable>(
        project: String, _ body: (any ProjectWriteTransaction) async throws -> TransactionEnd<T>
    ) async throws -> T

    /// What ``ProjectWriteTransaction/read(_:)`` would find, read without the project's write lock: the head version
    /// read no later than the rows, so a row committed after it has a higher version. A batch plans against it
    /// before it takes the lock, and re-checks the versions under it.
    func readCommitted(project: String, _ reads: TransactionReads) async throws -> TransactionSnapshot

    /// Reads a range of a collection's feed in one snapshot: the records (tombstones included) whose version is
    /// above `since`, in version order, at most `limit`, as `selection` chooses them (see ``FeedSelection``). Its
    /// filters are checked against `collection` and compiled for this engine (`validation_failed` naming the field);
    /// each row says whether it matches ``FeedSelection/filter``.
    func feedRange(
        project: String, collection: CollectionSchema, since: Int64, snapshotHigh: Int64?, limit: Int, selection: FeedSelection
    ) async throws -> FeedRows

    /// The live record `id` of `collection`: its version and the version at which each of its fields last changed
    /// (what `merge-fields` compares); `nil` when there is none or it is a tombstone.
    func fieldVersions(project: String, collection: String, id: String) async throws -> (version: Int64, fields: [String: Int64])?

    /// The digest of every live `(id, version)` of a collection matching `filter` (all when `nil`), read in ascending
    /// byte order of id into a ``CollectionDigest/Builder`` (never held all at once), with the project's head version,
    /// in one snapshot.
    func liveDigest(project: String, collection: CollectionSchema, filter: Filter?) async throws -> (head: Int64, digest: CollectionDigest)

    /// How many live records of `collection` match `filter` (all when `nil`), counting to `limit` at most (no limit
    /// when `nil`): the size of a snapshot, for progress, or whether one matches at all.
    func liveCount(project: String, collection: CollectionSchema, filter: Filter?, limit: Int?) async throws -> Int

    /// Rewrites the `rule_data` of `collection`'s live records to hold `fields` (``RuleFields``), after the data rules
    /// changed what they read; reads stay correct without it (they fall back to the data), only slower.
    func refreshRuleData(project: String, collection: String, fields: [String]) async throws

    /// The secret named `name`, made from `make()` the first time any instance asks and the same ever after.
    func secret(named name: String, make: @Sendable () -> String) async throws -> String

    /// Remembers the read filter a cursor's fingerprint stands for (``RecordScope/readFingerprint``); remembering
    /// one twice keeps the first.
    func rememberReadScope(fingerprint: String, filterText: String) async throws
    /// The read filter's JSON text remembered for `fingerprint`.
    func readScope(fingerprint: String) async throws -> String?

    // MARK: Clients

    /// Registers a client and returns its new id.
    func registerClient(project: String, user: String, device: String?, app: String?, now: Date) async throws -> String
    /// Notes the last version a client pulled (it never goes back); unknown ids are ignored.
    func notePull(clientID: String, project: String, version: Int64, now: Date) async throws
    /// The client `id` of `project`, with how far behind it is; `nil` when there is none.
    func client(id: String, project: String) async throws -> ClientSummary?
    /// Deletes the client `id` of `project` and its diagnostics report; false when there was none.
    func removeClient(id: String, project: String) async throws -> Bool
    /// Keeps `report` (JSON text) as the client's latest diagnostics report, replacing the one before; false, keeping
    /// nothing, when `project` has no client `clientID`.
    func storeDiagnostics(clientID: String, project: String, report: String, now: Date) async throws -> Bool
    /// The latest diagnostics report of the client `clientID` of `project`; `nil` when it uploaded none.
    func diagnostics(clientID: String, project: String) async throws -> StoredDiagnostics?
    /// What `project` remembers of the operation `opId` (its tag, answer and time); `nil` when it remembers none.
    func rememberedOperation(project: String, opId: String) async throws -> OperationHistoryEntry?

    // MARK: Administration

    /// Makes `user` a server operator (admin of every project and of the server-wide routes) or not; `not_found` for
    /// an unknown user.
    func setOperator(user: String, _ isOperator: Bool) async throws
    /// Whether `user` is a server operator; false for an unknown user.
    func isOperator(user: String) async throws -> Bool
    /// At most `limit` users whose name comes after `after` (from the first when `nil`), by name, with their projects.
    func users(after: String?, limit: Int) async throws -> [UserSummary]
    /// At most `limit` projects whose name comes after `after`, by name, with their member count and head version.
    func projects(after: String?, limit: Int) async throws -> [ProjectSummary]
    /// At most `limit` members of `project` whose user name comes after `after`, by user name; none for an unknown
    /// project.
    func members(project: String, after: String?, limit: Int) async throws -> [ProjectMember]
    /// At most `limit` clients of `project` at least `behind` versions behind its head version, whose id comes after
    /// `after`, by id; none for an unknown project.
    func clients(project: String, behind: Int64, after: String?, limit: Int) async throws -> [ClientSummary]
    /// Takes `user`'s membership of `project` away; false when there was none.
    func revoke(user: String, project: String) async throws -> Bool
    /// Revokes every token family of `user` and records `now` as when their sign-ins were revoked (for any user
    /// name, one the server has no account for too: an identity provider's user).
    func revokeSignIns(user: String, now: Date) async throws
    /// When `user`'s sign-ins were last revoked by ``revokeSignIns(user:now:)``, if ever: a token issued before it is
    /// refused.
    func signInsRevokedAt(user: String) async throws -> Date?
    /// Records a backup made of the server (``ServerBackup``); recording the same `createdAt` and `path` twice keeps one.
    func recordBackup(_ backup: BackupSummary) async throws
    /// The newest `limit` backups recorded, newest first.
    func backups(limit: Int) async throws -> [BackupSummary]

    // MARK: Maintenance

    /// Deletes tombstones changed before `tombstonesBefore` (remembering, per collection, the highest version
    /// deleted as ``FeedRows/purgedThrough``), operations and action calls' answers remembered before
    /// `operationsBefore` (both counted in ``PurgeReport/operations``) and tokens expired
    /// at `now`. Clients' last pulled versions (``notePull(clientID:project:version:now:)``) decide how long
    /// tombstones must be kept: one that a client seen within twice the retention (since
    /// ``holdersSeenSince(tombstonesBefore:now:)``) has not pulled yet stays, so a device away longer than the
    /// retention, but not twice as long, still pulls deltas (a client that never pulled to the end holds none: it
    /// starts with a snapshot). A client seen since `tombstonesBefore` pulled past every tombstone older than it.
    func purge(tombstonesBefore: Date, operationsBefore: Date, now: Date) async throws -> PurgeReport

    // MARK: Copying

    /// A page of `table`'s rows in key order: at most `limit`, after the row whose key is `after` (from the first row
    /// when `nil`), each value of the column's kind. With ``importRows(_:into:)`` it copies a server between any two
    /// backends (``ServerMigration``).
    func exportRows(of table: StorageTable, after: StorageRow?, limit: Int) async throws -> [StorageRow]
    /// Writes `rows` of `table` in one transaction, each replacing the row with the same key: written twice, a row
    /// is the same. Rows of tables that others refer to come first (``StorageTable/all`` is in that order).
    func importRows(_ rows: [StorageRow], into table: StorageTable) async throws

    // MARK: Operations

    /// Returns when the storage can serve (its database answers and its migrations are done); throws why not.
    func checkReady() async throws
    /// How busy the storage's connection pool is, for metrics; `nil` (the default) without a pool.
    var poolUsage: PoolUsage? { get }
    /// Whether `error`, thrown by this storage, says its disk is full (beyond what ``OutOfSpace`` recognises: a
    /// database server's own words). False by default.
    func isOutOfSpace(_ error: any Error) -> Bool
    /// Writes a little where the storage keeps its data, and removes it: throws when there is no room (what `/ready`
    /// asks while the storage is full, ``StorageSpaceMonitor``). Does nothing by default.
    func probeSpace() async throws
    /// Whether `error`, thrown by this storage, means its database cannot be reached now (a request may succeed
    /// later, or on another instance): the HTTP layer answers `503 unavailable`. False by default.
    func isUnavailable(_ error: any Error) -> Bool
    /// What went wrong, in the database's own words, for logs and `/ready` (never with query values); by default
    /// the error as it describes itself.
    func describe(_ error: any Error) -> String
    /// Closes the database once the work in flight ends; later calls fail. ``run()`` calls it at graceful shutdown.
    func close() async throws

    // MARK: Several instances

    /// Whether collections may live in tables of their own (``CollectionSchema/table``): PostgreSQL only.
    var supportsTableCollections: Bool { get }

    /// How live notices reach the other instances on this storage (`nil` by default).
    var noticeChannel: (any NoticeChannel)? { get }
    /// Where failed logins are remembered for every instance (`nil` by default: in each server's memory).
    var loginFailures: (any LoginFailureLog)? { get }
}

extension ServerStorage {
    /// ``feedRange(project:collection:since:snapshotHigh:limit:selection:)`` with a download query only: every
    /// change after `since` is listed, as `gone` when it does not match `filter`.
    public func feedRange(
        project: String, collection: CollectionSchema, since: Int64, snapshotHigh: Int64?, limit: Int, filter: Filter?
    ) async throws -> FeedRows {
        try await feedRange(
            project: project, collection: collection, since: since, snapshotHigh: snapshotHigh, limit: limit,
            selection: FeedSelection(filter: filter))
    }

    /// The live record `id` of `collection`, as the feed reads it (the one row of a snapshot window on that id);
    /// `nil` when there is none or it is a tombstone.
    func liveRow(project: String, collection: CollectionSchema, id: String) async throws -> FeedRow? {
        let rows = try await feedRange(
            project: project, collection: collection, since: 0, snapshotHigh: Int64.max, limit: 1,
            selection: FeedSelection(window: .condition("id", .eq, .string(id))))
        return rows.rows.first { $0.id == id && !$0.deleted }
    }

    /// The project's head version, read as the head of an empty range of its first collection's feed; 0 for a
    /// schema with no collection.
    func headVersion(project: String, schema: Schema) async throws -> Int64 {
        guard let collection = schema.collections.first else { return 0 }
        return try await feedRange(project: project, collection: collection, since: Int64.max - 1, snapshotHigh: nil, limit: 1, filter: nil).head
    }

    /// Whether a live record of `collection` matches `filter`.
    func containsLiveRecord(project: String, collection: CollectionSchema, matching filter: Filter) async throws -> Bool {
        try await liveCount(project: project, collection: collection, filter: filter, limit: 1) > 0
    }

    /// ``setSchema(project:schema:now:replacing:)`` at the current time, whatever the stored schema is.
    public func setSchema(project: String, schema: Schema) async throws {
        try await setSchema(project: project, schema: schema, now: Date(), replacing: nil)
    }

    /// The answer when the stored schema is no longer the one a change was made from.
    static func schemaChangedMeanwhile(_ project: String) -> ErrorBody {
        ErrorBody(code: .conflict, message: "the schema of \(project) changed while this one was being set: read it again and retry")
    }

    /// How live notices reach the other instances on this storage; `nil` (the default) for a storage one instance
    /// owns.
    public var noticeChannel: (any NoticeChannel)? { nil }
    /// No table collections, by default.
    public var supportsTableCollections: Bool { false }
    /// Where failed logins are remembered so every instance counts them; `nil` (the default) keeps them in the
    /// server's memory.
    public var loginFailures: (any LoginFailureLog)? { nil }
    /// No pool.
    public var poolUsage: PoolUsage? { nil }
    /// No error means "unavailable".
    public func isUnavailable(_ error: any Error) -> Bool { false }

    /// Only the errors ``OutOfSpace`` recognises.
    public func isOutOfSpace(_ error: any Error) -> Bool { false }

    /// Nothing to probe: the storage's disk is not this server's.
    public func probeSpace() async throws {}
    /// The error as it describes itself.
    public func describe(_ error: any Error) -> String { "\(error)" }
}

/// What a purge removed.
public struct PurgeReport: Sendable, Equatable {
    /// Tombstones deleted.
    public var tombstones: Int
    /// Remembered operation results deleted.
    public var operations: Int
    /// Expired tokens deleted.
    public var tokens: Int
    /// Expired `new` files deleted (by the server's sweep, after the storage's purge).
    public var files: Int = 0

    /// A report of these counts.
    public init(tombstones: Int, operations: Int, tokens: Int) {
        self.tombstones = tombstones
        self.operations = operations
        self.tokens = tokens
    }
}

extension ServerStorage {
    /// The clients that hold tombstones in a purge: those seen since this date, twice the retention before `now`.
    static func holdersSeenSince(tombstonesBefore: Date, now: Date) -> Date {
        min(tombstonesBefore, tombstonesBefore.addingTimeInterval(-now.timeIntervalSince(tombstonesBefore)))
    }
}
