import Foundation

/// A user account.
public struct StoredUser: Sendable, Hashable {
    /// The login name: 1 to 128 characters of `[A-Za-z0-9_.:-]`, unique on the server.
    public var name: String
    /// The bcrypt hash of the password (see ``PasswordHasher``), never the password.
    public var passwordHash: String

    /// A user with this name and bcrypt hash.
    public init(name: String, passwordHash: String) {
        self.name = name
        self.passwordHash = passwordHash
    }
}

/// What kind of token.
public enum TokenKind: String, Sendable {
    /// `access` authorises API calls (15 minutes by default); `refresh` gets a new pair once (30 days by default).
    case access, refresh
}

/// A token as stored: its SHA-256 hash, never the token itself.
public struct StoredToken: Sendable, Hashable {
    /// The SHA-256 of the token, as lowercase hex: the key it is looked up by.
    public var hash: String
    /// Whether this is an access or a refresh token.
    public var kind: TokenKind
    /// The name of the user the token acts for.
    public var user: String
    /// All tokens issued from one login share a family; reuse of a refresh token revokes it.
    public var family: String
    /// When the token stops working; the purge deletes it after that.
    public var expiresAt: Date
    /// True once its family was revoked (logout, or reuse of a refresh token): it no longer works.
    public var revoked: Bool
    /// True once a refresh token was exchanged; presenting it again revokes its family.
    public var used: Bool

    /// A token with these values, by default neither revoked nor used.
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
