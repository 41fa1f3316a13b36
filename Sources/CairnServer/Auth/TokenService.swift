import CairnProtocol
import Crypto
import Foundation

/// Issues, checks, rotates and revokes tokens. Tokens are random 256-bit strings; only their SHA-256 is stored,
/// so a copy of the database does not hold usable tokens.
struct TokenService: Sendable {
    let storage: any ServerStorage
    let clock: any WallClock
    /// Lifetime of access tokens.
    var accessTokenLifetime: TimeInterval
    /// Lifetime of refresh tokens.
    var refreshTokenLifetime: TimeInterval

    /// A new access/refresh pair for `user`, in a new family unless `family` is given (rotation).
    func issue(user: String, family: String? = nil) async throws -> (access: String, refresh: String, expiresIn: Int) {
        let family = family ?? Self.randomToken(prefix: "f_")
        let access = Self.randomToken(prefix: "cat_")
        let refresh = Self.randomToken(prefix: "crt_")
        let now = clock.now()
        try await storage.insertToken(StoredToken(
            hash: Self.hash(access), kind: .access, user: user, family: family, expiresAt: now + accessTokenLifetime))
        try await storage.insertToken(StoredToken(
            hash: Self.hash(refresh), kind: .refresh, user: user, family: family, expiresAt: now + refreshTokenLifetime))
        return (access, refresh, Int(accessTokenLifetime))
    }

    /// The user an access token belongs to, or `unauthorized`.
    func authenticate(accessToken: String) async throws -> StoredToken {
        guard let token = try await storage.token(hash: Self.hash(accessToken)), token.kind == .access, !token.revoked,
            token.expiresAt > clock.now()
        else { throw ErrorBody.unauthorized("The access token is invalid, expired or revoked: refresh it or sign in again") }
        return token
    }

    /// Rotates a refresh token: the old one dies, a new pair is issued in the same family. Presenting a used
    /// refresh token revokes the whole family (someone else holds a copy).
    func refresh(_ refreshToken: String) async throws -> (user: String, access: String, refresh: String, expiresIn: Int) {
        let invalid = ErrorBody.unauthorized("The refresh token is invalid, expired or revoked: sign in again")
        guard let token = try await storage.token(hash: Self.hash(refreshToken)), token.kind == .refresh else { throw invalid }
        guard !token.revoked, token.expiresAt > clock.now() else { throw invalid }
        guard try await storage.consumeRefreshToken(hash: token.hash) else {
            try await storage.revokeTokenFamily(token.family)
            throw ErrorBody.unauthorized("This refresh token was already used; every token of this sign-in is now revoked")
        }
        let pair = try await issue(user: token.user, family: token.family)
        return (token.user, pair.access, pair.refresh, pair.expiresIn)
    }

    /// What is stored of a token, and looked up by: the SHA-256 of its text, as lowercase hex (``StoredToken/hash``).
    static func hash(_ token: String) -> String { Hex.encode(SHA256.hash(data: Data(token.utf8))) }

    /// A new token: `prefix` and 32 random bytes in base64url.
    static func randomToken(prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return prefix + Data(bytes).base64URLEncodedString
    }
}
