import CairnProtocol
import Foundation
import JWTKit

/// `jwks`: an identity provider's key set. What reads holds only keys with a `kid` and one of the three accepted
/// algorithms (each matching its key type, and the key's own `alg` when it names one); the keys written back as a JWKS read to the same kids and algorithms;
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
        // A key that names its algorithm is used with that one only (checked when one member names it: of two, the
        // decoder reads the first and the strict parser the last).
        let documentKeys = (try? JSONValue(parsing: bytes))?["keys"]?.arrayValue ?? []
        let kids = documentKeys.compactMap { $0["kid"]?.stringValue }
        for key in documentKeys {
            guard let kid = key["kid"]?.stringValue, kids.filter({ $0 == kid }).count == 1, let alg = key["alg"]?.stringValue,
                occurrences(of: #""alg""#, in: bytes) == 1,
                let algorithm = keys.algorithm(of: kid)
            else { continue }
            require(alg == algorithm, "key \(kid.debugDescription) published for \(alg) is used with \(algorithm)")
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

/// How often `text` occurs in `bytes`.
func occurrences(of text: String, in bytes: [UInt8]) -> Int {
    let needle = Array(text.utf8)
    guard bytes.count >= needle.count else { return 0 }
    return (0...(bytes.count - needle.count)).filter { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }.count
}
