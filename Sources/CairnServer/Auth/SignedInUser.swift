import Foundation
import CairnProtocol

/// Who signed a request in, as ``AuthenticationMiddleware`` found it: with one of Cairn's access tokens, with a
/// JWT of the configured identity provider, or with a service key (another system).
struct SignedInUser: Sendable {
    /// The user name: the token's user, or the JWT's `sub`.
    let user: String
    /// The Cairn sign-in (token family) the access token belongs to, which logout revokes; `nil` for a JWT.
    let family: String?
    /// Every claim of the JWT except the registered ones (`iss`, `sub`, `aud`, `exp`, `nbf`, `iat`, `jti`) and the
    /// roles claim; `nil` for Cairn's tokens.
    let tokenClaims: [String: JSONValue]?
    /// Roles by project from the JWT's roles claim; `nil` for Cairn's tokens and for JWTs without that claim (then
    /// membership comes from the members table).
    let tokenRoles: [String: Role]?
    /// When the JWT was issued (`iat`); `nil` for Cairn's tokens and JWTs without it.
    let issuedAt: Date?
    /// The service key that signed the request in, as stored when it did; `nil` for people.
    var serviceKey: StoredServiceKey? = nil

    /// A user signed in with a Cairn access token.
    init(token: StoredToken) {
        self.init(user: token.user, family: token.family, tokenClaims: nil, tokenRoles: nil)
    }

    /// A user with an account here, as a Cairn sign-in of theirs would be seen, though none is at hand: for the
    /// admin routes that look through a member's eyes (`view-as`, `explain`).
    static func account(_ user: String) -> SignedInUser {
        SignedInUser(user: user, family: nil, tokenClaims: nil, tokenRoles: nil)
    }

    /// Another system signed in with a service key: user `service:NAME`, a member of the key's project only.
    init(serviceKey: StoredServiceKey) {
        self.init(user: ServiceKeySignIn.userPrefix + serviceKey.name, family: nil, tokenClaims: nil, tokenRoles: nil)
        self.serviceKey = serviceKey
    }

    /// Whether an identity provider's JWT signed the request in (its claims are at hand), not one of Cairn's tokens.
    var isIdentityProviderUser: Bool { tokenClaims != nil }

    /// A user signed in as described.
    init(user: String, family: String?, tokenClaims: [String: JSONValue]?, tokenRoles: [String: Role]?, issuedAt: Date? = nil) {
        self.user = user
        self.family = family
        self.tokenClaims = tokenClaims
        self.tokenRoles = tokenRoles
        self.issuedAt = issuedAt
    }
}
