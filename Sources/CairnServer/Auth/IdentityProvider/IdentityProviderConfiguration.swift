import Foundation

/// Sign-in through a company's identity provider: `Authorization: Bearer <JWT>` accepted beside Cairn's own
/// tokens, checked against the provider's JWKS, issuer and audience.
///
/// ```swift
/// var configuration = ServerConfiguration(dataDirectory: directory)
/// configuration.identityProvider = IdentityProviderConfiguration(
///     jwks: "https://login.example.com/.well-known/jwks.json", issuer: "https://login.example.com/", audience: "cairn")
/// ```
public struct IdentityProviderConfiguration: Sendable {
    /// Where the signing keys are: an `http(s)://` URL (fetched, cached, fetched again on an unknown `kid`) or a
    /// file path (`file://` URLs too), read once when the server starts.
    public var jwks: String
    /// The `iss` every token must carry, exactly.
    public var issuer: String
    /// A value the token's `aud` must hold.
    public var audience: String
    /// The claim that carries Cairn roles, shaped `{"projects": {"field": "writer"}}` (default `cairn`). Without
    /// it in a token, membership comes from Cairn's own members table.
    public var rolesClaim: String = "cairn"
    /// How far `exp` and `nbf` may be off from the server's clock (default 60 s).
    public var clockSkew: TimeInterval = 60
    /// The earliest a JWKS at a URL is fetched again for a token with an unknown `kid` (default 30 s).
    public var minimumRefetchInterval: TimeInterval = 30
    /// How long a fetched JWKS is kept when its answer names no `Cache-Control: max-age` (default 10 minutes);
    /// a `max-age` is honoured between 1 minute and 1 day.
    public var defaultCacheTime: TimeInterval = 600

    /// Tokens from `issuer` for `audience`, signed by the keys at `jwks`.
    public init(jwks: String, issuer: String, audience: String, rolesClaim: String = "cairn") {
        self.jwks = jwks
        self.issuer = issuer
        self.audience = audience
        self.rolesClaim = rolesClaim
    }

    /// The JWKS's URL when ``jwks`` names one over HTTP(S); `nil` for a file.
    var jwksURL: URL? {
        guard jwks.hasPrefix("http://") || jwks.hasPrefix("https://") else { return nil }
        return URL(string: jwks)
    }

    /// The JWKS's file path when ``jwks`` names a file (a plain path or a `file://` URL).
    var jwksFilePath: String {
        if jwks.hasPrefix("file://"), let url = URL(string: jwks) { return url.path }
        return jwks
    }
}
