import CairnProtocol
import Foundation
import JWTKit

// The two server types JWTVerifier.swift talks to, as small doubles: the real ones pull in the whole server (an HTTP
// client for JWKS URLs; tokens, service keys and the store for signed-in users). The verifier's own rules are
// compiled from its source file.

/// A JWKS read from a file, as the server's `JWKSSource` reads one (no URL fetching here).
actor JWKSSource {
    private let keys: JWKSKeys
    private var collection: JWTKeyCollection?

    init(configuration: IdentityProviderConfiguration, clock: any WallClock) throws {
        guard let data = FileManager.default.contents(atPath: configuration.jwksFilePath) else { throw JWKSError("cannot read the JWKS file") }
        keys = try JWKSKeys.parse(data)
    }

    func key(_ kid: String) async -> (algorithm: String, collection: JWTKeyCollection)? {
        guard let algorithm = keys.algorithm(of: kid) else { return nil }
        if let collection { return (algorithm, collection) }
        let made = await keys.collection()
        collection = made
        return (algorithm, made)
    }

    var failure: String? { nil }
}

/// Who a token signs in, as the verifier returns it.
struct SignedInUser: Sendable {
    let user: String
    let family: String?
    let tokenClaims: [String: JSONValue]?
    let tokenRoles: [String: Role]?
    let issuedAt: Date?

    init(user: String, family: String?, tokenClaims: [String: JSONValue]?, tokenRoles: [String: Role]?, issuedAt: Date? = nil) {
        self.user = user
        self.family = family
        self.tokenClaims = tokenClaims
        self.tokenRoles = tokenRoles
        self.issuedAt = issuedAt
    }
}

extension ErrorCode {
    /// The SDK's code for an answer that breaks the protocol (Sources/Cairn/Errors/CairnError.swift), which the batch
    /// scanner names.
    static let badResponse: ErrorCode = "bad_response"
}
