import CairnProtocol
import Foundation
import JWTKit

/// `jwks`: an identity provider's key set. What reads holds only keys with a `kid` and one of the three accepted
/// algorithms (each matching its key type); the keys written back as a JWKS read to the same kids and algorithms;
/// jwt-kit makes a key collection of them without crashing, whatever the key material.
enum JWKSTarget {
    static func run(_ bytes: [UInt8]) {
        guard let keys = try? JWKSKeys.parse(Data(bytes)) else { return }
        require(!keys.keys.isEmpty, "an empty key set reads")
        for (kid, jwk) in keys.keys {
            let algorithm = keys.algorithm(of: kid)
            require(algorithm.map(JWTVerifier.algorithms.contains) == true, "key \(kid.debugDescription) has algorithm \(String(describing: algorithm))")
            let expected: String? = switch jwk.keyType.rawValue {
            case "RSA": "RS256"
            case "EC": "ES256"
            case "OKP": "EdDSA"
            default: nil
            }
            require(algorithm == expected, "key \(kid.debugDescription) of type \(jwk.keyType.rawValue) has algorithm \(String(describing: algorithm))")
        }
        let written = keys.keys.map { kid, jwk -> JSONValue in
            guard let data = try? JSONEncoder().encode(jwk), case .object(var members)? = try? JSONValue(parsing: data) else {
                require(false, "key \(kid.debugDescription) does not encode")
                return .null
            }
            members["kid"] = .string(kid)
            return .object(members)
        }
        let document = JSONValue.object(["keys": .array(written)]).jsonData()
        guard let again = try? JWKSKeys.parse(document) else { return require(false, "keys written back do not read: \(show(document))") }
        require(again.keys.keys.sorted() == keys.keys.keys.sorted(), "keys written back read to other kids")
        for kid in keys.keys.keys { require(again.algorithm(of: kid) == keys.algorithm(of: kid), "key \(kid.debugDescription) changes algorithm") }
        _ = runBlocking { await keys.collection() }
    }
}
