import Foundation
import JWTKit

/// One version of an identity provider's JWKS, ready to verify with: the usable keys by `kid`, each bound to the
/// one algorithm Cairn accepts for its type (RSA: RS256, EC P-256: ES256, OKP Ed25519: EdDSA). Keys of other
/// types, curves or algorithms, keys for encryption (`"use": "enc"`), keys without a `kid` and private keys (with a
/// `d`: a JWKS publishes public keys, and the crypto library can crash on a private RSA key whose modulus is even) are
/// left out, so a token can never be checked with HMAC or with an algorithm its key was not published for.
struct JWKSKeys: Sendable {
    /// The usable keys by `kid`, each with its one algorithm set.
    let keys: [String: JWK]

    /// No keys (a JWKS at a URL before its first fetch).
    static let empty = JWKSKeys(keys: [:])

    private init(keys: [String: JWK]) { self.keys = keys }

    /// The algorithm the key `kid` signs with, or `nil` for a `kid` this JWKS lacks.
    func algorithm(of kid: String) -> String? { keys[kid]?.algorithm?.rawValue }

    /// The keys of a JWKS document; throws when it is not a JWKS or holds no usable key.
    static func parse(_ data: Data) throws -> JWKSKeys {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch {
            throw JWKSError("it is not a JWKS (a JSON object with a \"keys\" array)")
        }
        var keys: [String: JWK] = [:]
        for key in document.keys {
            guard var jwk = key.jwk, let kid = key.info?.kid, let algorithm = key.info?.algorithm, key.info?.use != "enc",
                key.info?.d == nil
            else { continue }
            jwk.algorithm = algorithm
            keys[kid] = jwk
        }
        guard !keys.isEmpty else {
            throw JWKSError("it holds no usable key (RSA for RS256, EC P-256 for ES256 or OKP Ed25519 for EdDSA, each with a kid)")
        }
        return JWKSKeys(keys: keys)
    }

    /// A key collection that verifies with exactly these keys; a key whose material jwt-kit refuses is left out.
    func collection() async -> JWTKeyCollection {
        let collection = JWTKeyCollection()
        for jwk in keys.values { _ = try? await collection.add(jwk: jwk) }
        return collection
    }

    /// `{"keys": [...]}`, each key read leniently: one Cairn cannot use does not spoil the others.
    private struct Document: Decodable {
        let keys: [Key]
    }

    private struct Key: Decodable {
        let info: KeyInfo?
        let jwk: JWK?

        init(from decoder: any Decoder) throws {
            self.info = try? KeyInfo(from: decoder)
            self.jwk = try? JWK(from: decoder)
        }
    }

    /// The members that decide whether, and with which algorithm, a key is used.
    private struct KeyInfo: Decodable {
        let kid: String?
        let kty: String?
        let crv: String?
        let alg: String?
        let use: String?
        /// A private key's secret (RSA's private exponent, EC's and OKP's private key).
        let d: String?

        /// The one algorithm Cairn accepts for this key, or `nil` when it accepts none.
        var algorithm: JWK.Algorithm? {
            let accepted: JWK.Algorithm
            switch (kty, crv) {
            case ("RSA", _): accepted = .rs256
            case ("EC", "P-256"): accepted = .es256
            case ("OKP", "Ed25519"): accepted = .eddsa
            default: return nil
            }
            guard alg == nil || alg == accepted.rawValue else { return nil }
            return accepted
        }
    }
}

/// An identity provider's JWKS that cannot be used, with the reason: the server does not start with a JWKS file
/// it cannot use.
public struct JWKSError: Error, CustomStringConvertible {
    /// What is wrong, in words.
    public let description: String
    init(_ description: String) { self.description = description }
}
