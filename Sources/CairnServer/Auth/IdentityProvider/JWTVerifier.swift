import CairnProtocol
import Foundation
import JWTKit

/// Checks an identity provider's JWT and says who it signs in: the signature with a key of the provider's JWKS
/// (RS256, ES256 or EdDSA only, the one algorithm its key is published for), then `exp` and `nbf` (with
/// ``IdentityProviderConfiguration/clockSkew``), `iss`, `aud`, `sub` and the roles claim. Every refusal is
/// `401 unauthorized` naming the check that failed; the token itself is never repeated.
struct JWTVerifier: Sendable {
    let configuration: IdentityProviderConfiguration
    let keys: JWKSSource
    let clock: any WallClock

    /// The signature algorithms accepted.
    static let algorithms: Set<String> = ["RS256", "ES256", "EdDSA"]

    /// A verifier for `configuration`, reading a JWKS file now (throws ``JWKSError`` when it cannot be used).
    init(configuration: IdentityProviderConfiguration, clock: any WallClock) throws {
        self.configuration = configuration
        self.keys = try JWKSSource(configuration: configuration, clock: clock)
        self.clock = clock
    }

    /// The user `token` signs in, or `401 unauthorized` with the reason.
    func verify(_ token: String) async throws -> SignedInUser {
        let header: JWTHeader
        do {
            header = try DefaultJWTParser().parse([UInt8](token.utf8), as: IdentityClaims.self).header
        } catch {
            throw Self.refused("it is not a well-formed JWT (three base64url parts: a JSON header, JSON claims, a signature)")
        }
        let algorithm = header.alg ?? ""
        guard Self.algorithms.contains(algorithm) else {
            if algorithm.lowercased() == "none" { throw Self.refused("it is unsigned (alg none)") }
            if algorithm.hasPrefix("HS") { throw Self.refused("HMAC signatures (\(algorithm)) are not accepted; sign with RS256, ES256 or EdDSA") }
            throw Self.refused("its algorithm \(Self.quoted(algorithm)) is not accepted; sign with RS256, ES256 or EdDSA")
        }
        guard let kid = header.kid, !kid.isEmpty else { throw Self.refused("its header names no key (kid)") }
        guard let key = await keys.key(kid) else {
            let failure = await keys.failure.map { " (\($0))" } ?? ""
            throw Self.refused("its key \(Self.quoted(kid)) is not in the identity provider's JWKS\(failure)")
        }
        guard key.algorithm == algorithm else {
            throw Self.refused("its algorithm \(algorithm) is not the one of key \(Self.quoted(kid)), \(key.algorithm)")
        }
        let claims: IdentityClaims
        do {
            claims = try await key.collection.verify(token, as: IdentityClaims.self)
        } catch {
            throw Self.refused("its signature does not verify with key \(Self.quoted(kid))")
        }
        guard !Self.repeatsAClaim(token) else { throw Self.refused("its claims repeat a name, which RFC 7519 forbids") }
        return try user(claims)
    }

    /// Whether the token's claims name one claim twice. RFC 7519 (section 4) has such a token refused or read with
    /// the last of the two; jwt-kit's JSON decoder reads the first, so a claim could mean one thing here and another
    /// elsewhere: it is refused.
    static func repeatsAClaim(_ token: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Data(base64URLEncoded: String(parts[1])) else { return false }
        return Array(payload).withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer)
            var names: Set<String> = []
            var repeated = false
            try? parser.members { parser, name in
                if !names.insert(name).inserted { repeated = true }
                try parser.skipValue()
            }
            return repeated
        }
    }

    /// The user of verified `claims`, once their times, issuer, audience, subject and roles are checked.
    func user(_ claims: IdentityClaims) throws -> SignedInUser {
        let now = clock.now().timeIntervalSince1970
        guard let expiry = claims.seconds("exp") else { throw Self.refused("it has no expiry (exp)") }
        guard now <= expiry + configuration.clockSkew else {
            throw Self.refused("it expired at \(Self.date(expiry)); get a new one from the identity provider")
        }
        if let notBefore = claims.seconds("nbf"), now + configuration.clockSkew < notBefore {
            throw Self.refused("it is not valid before \(Self.date(notBefore)) (nbf); check the clocks")
        }
        guard case .string(let issuer) = claims.values["iss"], issuer == configuration.issuer else {
            let found = claims.values["iss"]?.stringValue.map(Self.quoted) ?? "missing"
            throw Self.refused("its issuer (iss) is \(found), not \(Self.quoted(configuration.issuer))")
        }
        let audiences: [String]
        switch claims.values["aud"] {
        case .string(let audience): audiences = [audience]
        case .array(let values): audiences = values.compactMap(\.stringValue)
        default: audiences = []
        }
        guard audiences.contains(configuration.audience) else {
            throw Self.refused("its audience (aud) does not include \(Self.quoted(configuration.audience))")
        }
        guard case .string(let subject) = claims.values["sub"], !subject.isEmpty, subject.count <= 255,
            !subject.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw Self.refused("its subject (sub) must be 1 to 255 characters without control characters") }
        let roles = try claims.values[configuration.rolesClaim].map(roles)
        let others = claims.values.filter { !IdentityClaims.registered.contains($0.key) && $0.key != configuration.rolesClaim }
        return SignedInUser(
            user: subject, family: nil, tokenClaims: others, tokenRoles: roles, issuedAt: claims.seconds("iat").map(Date.init(timeIntervalSince1970:)))
    }

    /// The roles of a roles claim shaped `{"projects": {"field": "writer"}}`.
    func roles(_ claim: JSONValue) throws -> [String: Role] {
        let shape = "must be shaped {\"projects\": {\"PROJECT\": \"reader\" | \"writer\" | \"admin\"}}"
        guard case .object(let object) = claim, case .object(let projects) = object["projects"] else {
            throw Self.refused("its roles claim \(Self.quoted(configuration.rolesClaim)) \(shape)")
        }
        var roles: [String: Role] = [:]
        for (project, value) in projects {
            guard let role = value.stringValue.flatMap(Role.init(rawValue:)) else {
                throw Self.refused("its roles claim \(Self.quoted(configuration.rolesClaim)) gives project \(Self.quoted(project)) no known role; it \(shape)")
            }
            roles[project] = role
        }
        return roles
    }

    static func refused(_ reason: String) -> ErrorBody {
        ErrorBody.unauthorized("The identity provider's token was refused: \(reason)")
    }

    /// `text` in quotes, cut to 100 characters (a header's value is the caller's, not ours).
    static func quoted(_ text: String) -> String { "\"\(text.prefix(100))\"" }

    static func date(_ seconds: Double) -> String { Date(timeIntervalSince1970: seconds).formatted(.iso8601) }
}
