import CairnProtocol
import Foundation

/// Everything the server keeps, behind one narrow interface: routes and sync logic talk to this protocol only,
/// so a second backend (PostgreSQL) plugs in without touching them. ``SQLiteStorage`` is the default.
///
/// Backends must make the changes feed gap-free: a change may become visible to readers only after every change
/// with a lower version is visible.
public protocol ServerStorage: Sendable {
    // MARK: Accounts

    /// Creates a user; `already_exists` if the name is taken.
    func createUser(name: String, passwordHash: String) async throws
    /// Replaces a user's password hash.
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

    /// Creates a project with an empty schema; `already_exists` if taken.
    func createProject(name: String, now: Date) async throws
    /// Gives `user` a role in `project` (replacing any other); `not_found` for an unknown user or project.
    func grant(user: String, project: String, role: Role) async throws
    /// The role `user` holds in `project`, or `nil` when not a member.
    func role(user: String, project: String) async throws -> Role?
    /// Every project of `user`, with roles.
    func memberships(user: String) async throws -> [ProjectMembership]
    /// The project's schema (with its version), or `nil` for an unknown project.
    func schema(project: String) async throws -> Schema?
    /// Replaces the project's schema (already checked, version already set).
    func setSchema(project: String, schema: Schema) async throws

    // MARK: Records

    /// One page of the changes feed.
    func changes(project: String, query: ChangesQuery) async throws -> ChangesRows
    /// Applies a batch with ``BatchPlanner``'s rules in one transaction, remembering each `opId`'s result.
    func applyBatch(project: String, batch: BatchRequest, schema: Schema, user: String, now: Date) async throws -> BatchOutcome
    /// Every live `(id, version)` of a collection, in id order, with the project's head version, read in one snapshot.
    func liveVersions(project: String, collection: String) async throws -> (head: Int64, pairs: [(String, Int64)])

    // MARK: Clients

    /// Registers a client and returns its new id.
    func registerClient(project: String, user: String, device: String?, app: String?, now: Date) async throws -> String
    /// Notes the last version a client pulled (for tombstone retention); unknown ids are ignored.
    func notePull(clientID: String, project: String, version: Int64, now: Date) async throws

    // MARK: Maintenance

    /// Purges tombstones older than `tombstonesBefore`, op results older than `operationsBefore` and expired tokens.
    func purge(tombstonesBefore: Date, operationsBefore: Date, now: Date) async throws -> PurgeReport
}

/// A user account.
public struct StoredUser: Sendable, Hashable {
    public var name: String
    public var passwordHash: String
}

/// What kind of token.
public enum TokenKind: String, Sendable {
    case access, refresh
}

/// A token as stored: its SHA-256 hash, never the token itself.
public struct StoredToken: Sendable, Hashable {
    public var hash: String
    public var kind: TokenKind
    public var user: String
    /// All tokens issued from one login share a family; reuse of a refresh token revokes it.
    public var family: String
    public var expiresAt: Date
    public var revoked: Bool
    public var used: Bool

    public init(hash: String, kind: TokenKind, user: String, family: String, expiresAt: Date, revoked: Bool = false, used: Bool = false) {
        self.hash = hash
        self.kind = kind
        self.user = user
        self.family = family
        self.expiresAt = expiresAt
        self.revoked = revoked
        self.used = used
    }
}

/// A page request of the changes feed, already decoded from the cursor.
public struct ChangesQuery: Sendable {
    public var collection: String
    /// Changes with a version above this one.
    public var since: Int64
    /// During a snapshot: the head version when it began. Tombstones at or below it are skipped.
    public var snapshotHigh: Int64?
    /// Most entries to return.
    public var limit: Int
    /// The compiled `where` filter over the record's JSON column `data` (and `id`).
    public var filter: CompiledFilter?
}

/// A page of the changes feed as JSON text, one entry per change, already shaped as PROTOCOL.md's change objects.
public struct ChangesRows: Sendable {
    /// Each change as JSON text.
    public var entries: [String]
    /// The version of the last entry (or `since` when empty).
    public var lastVersion: Int64
    /// True when more rows follow.
    public var hasMore: Bool
    /// The highest version purged from this collection's tombstones.
    public var purgedThrough: Int64
    /// The project's head version at the time of reading.
    public var head: Int64
}

/// What a batch did.
public struct BatchOutcome: Sendable {
    public var results: [OperationResult]
    /// Each result as the JSON text stored for replay and sent back, in order.
    public var resultTexts: [String]
    /// For live notices: the highest new version per changed collection.
    public var changedCollections: [String: Int64]
}

/// What a purge removed.
public struct PurgeReport: Sendable, Equatable {
    public var tombstones: Int
    public var operations: Int
    public var tokens: Int
}
