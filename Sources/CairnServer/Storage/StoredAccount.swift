import Foundation

/// A user account.
public struct StoredUser: Sendable, Hashable {
    public var name: String
    public var passwordHash: String

    public init(name: String, passwordHash: String) {
        self.name = name
        self.passwordHash = passwordHash
    }
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
