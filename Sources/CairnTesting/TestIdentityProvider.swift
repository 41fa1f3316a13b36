import CairnProtocol
import Crypto
import CryptoExtras
import Foundation

/// An identity provider for tests: keys in the three algorithms Cairn accepts (made with swift-crypto, not with the
/// library the server verifies with), the JWKS of their public halves, and JWTs signed with them.
///
/// ```swift
/// let provider = try TestIdentityProvider()
/// try provider.jwks().write(to: file)   // --jwks file, --jwt-issuer TestIdentityProvider.issuer, ...
/// let jwt = try TestIdentityProvider.token(TestIdentityProvider.claims("zoe", now: clock.now()), key: provider.rsa)
/// ```
public struct TestIdentityProvider: Sendable {
    /// The `iss` of its tokens.
    public static let issuer = "https://login.example.test/"
    /// The `aud` of its tokens.
    public static let audience = "cairn-tests"

    /// A signing key and the JWK of its public half.
    public struct Key: Sendable {
        /// Its `kid`.
        public let kid: String
        /// Its JWS algorithm: `RS256`, `ES256` or `EdDSA`.
        public let algorithm: String
        /// The JWK of its public half.
        public let jwk: JSONValue
        /// Signs a JWS signing input.
        public let sign: @Sendable (Data) throws -> Data
    }

    /// An RSA key (RS256), `kid` `rsa-1`.
    public let rsa: Key
    /// An EC P-256 key (ES256), `kid` `ec-1`.
    public let ec: Key
    /// An Ed25519 key (EdDSA), `kid` `ed-1`.
    public let ed: Key

    /// New keys.
    public init() throws {
        let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try rsaKey.publicKey.getKeyPrimitives()
        rsa = Key(
            kid: "rsa-1", algorithm: "RS256",
            jwk: ["kty": "RSA", "kid": "rsa-1", "use": "sig", "n": .string(Self.base64URL(primitives.modulus)),
                  "e": .string(Self.base64URL(primitives.publicExponent))],
            sign: { try rsaKey.signature(for: $0, padding: .insecurePKCS1v1_5).rawRepresentation })
        let ecKey = P256.Signing.PrivateKey()
        let point = ecKey.publicKey.x963Representation.dropFirst()
        ec = Key(
            kid: "ec-1", algorithm: "ES256",
            jwk: ["kty": "EC", "kid": "ec-1", "crv": "P-256", "x": .string(Self.base64URL(point.prefix(32))),
                  "y": .string(Self.base64URL(point.suffix(32)))],
            sign: { try ecKey.signature(for: $0).rawRepresentation })
        let edKey = Curve25519.Signing.PrivateKey()
        ed = Key(
            kid: "ed-1", algorithm: "EdDSA",
            jwk: ["kty": "OKP", "kid": "ed-1", "crv": "Ed25519", "x": .string(Self.base64URL(edKey.publicKey.rawRepresentation))],
            sign: { try edKey.signature(for: $0) })
    }

    /// The JWKS of `keys` (all three by default).
    public func jwks(_ keys: [Key]? = nil) -> Data {
        Self.json(["keys": .array((keys ?? [rsa, ec, ed]).map(\.jwk))])
    }

    /// Claims that pass every check at `now`, for `user`, with `extra` added (a `nil` value removes a claim).
    public static func claims(_ user: String, now: Date, _ extra: [String: JSONValue?] = [:]) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(audience), "sub": .string(user),
            "exp": .integer(Int64(now.timeIntervalSince1970) + 300), "iat": .integer(Int64(now.timeIntervalSince1970)),
        ]
        for (name, value) in extra { claims[name] = value }
        return claims
    }

    /// A JWT of `claims` signed with `key`; `header` entries replace the usual `alg`, `kid` and `typ`.
    public static func token(_ claims: [String: JSONValue], key: Key, header: [String: JSONValue] = [:]) throws -> String {
        var fields: [String: JSONValue] = ["alg": .string(key.algorithm), "kid": .string(key.kid), "typ": "JWT"]
        for (name, value) in header { fields[name] = value }
        let input = base64URL(json(.object(fields))) + "." + base64URL(json(.object(claims)))
        return input + "." + base64URL(try key.sign(Data(input.utf8)))
    }

    /// A token whose header names `algorithm` and whose signature is made by `sign` over the usual input.
    public static func token(_ claims: [String: JSONValue], algorithm: String, kid: String, sign: (Data) -> Data) -> String {
        let header: JSONValue = ["alg": .string(algorithm), "kid": .string(kid), "typ": "JWT"]
        let input = base64URL(json(header)) + "." + base64URL(json(.object(claims)))
        return input + "." + base64URL(sign(Data(input.utf8)))
    }

    /// `value` as JSON bytes.
    public static func json(_ value: JSONValue) -> Data { Data(value.jsonText().utf8) }

    /// Base64url without padding, as JWTs write it.
    public static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

