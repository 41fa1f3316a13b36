import CairnProtocol
import Crypto
import Foundation
import JWTKit

/// `jwt`: the identity provider's token check (JWTVerifier.swift, on jwt-kit), against a JWKS of one Ed25519 key. An
/// input that starts with `{` is a claims document, signed here with that key; anything else is a token as sent
/// (the corpus holds valid tokens to mutate). A token the verifier accepts carries a signature that verifies with
/// the key over its first two parts, and its claims pass every check (issuer, audience, expiry, subject): a
/// mutation of a valid token is refused or reads to the same claims.
enum JWTTarget {
    static let key = try! Curve25519.Signing.PrivateKey(rawRepresentation: Array(repeating: UInt8(42), count: 32))
    static let issuer = "https://id.example.com/", audience = "cairn"
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let claims = #"{"iss":"https://id.example.com/","aud":["cairn","other"],"sub":"alice","exp":1900000000,"iat":1790000000,"cairn":{"projects":{"p":"writer"}},"team":"blue"}"#

    struct FixedClock: WallClock { func now() -> Date { JWTTarget.now } }

    static let verifier: JWTVerifier = {
        let path = FileManager.default.temporaryDirectory.appending(path: "cairn-fuzz-jwks-\(getpid()).json").path
        let jwks = #"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"\#(Data(key.publicKey.rawRepresentation).base64URLEncodedString)"}]}"#
        _ = FileManager.default.createFile(atPath: path, contents: Data(jwks.utf8))
        do {
            return try JWTVerifier(configuration: IdentityProviderConfiguration(jwks: path, issuer: issuer, audience: audience), clock: FixedClock())
        } catch {
            fatalError("the fuzz JWKS does not load: \(error)")
        }
    }()

    /// A token of `header` and `payload`, signed with the key.
    static func sign(header: String = #"{"alg":"EdDSA","kid":"k1","typ":"JWT"}"#, payload: [UInt8]) -> String {
        let signed = Data(header.utf8).base64URLEncodedString + "." + Data(payload).base64URLEncodedString
        let signature = try! key.signature(for: Data(signed.utf8))
        return signed + "." + Data(signature).base64URLEncodedString
    }

    static func run(_ bytes: [UInt8]) {
        if let seeds = ProcessInfo.processInfo.environment["CAIRN_FUZZ_JWT_SEEDS"] {
            try? sign(payload: Array(claims.utf8)).write(toFile: seeds, atomically: true, encoding: .utf8)
        }
        let token = bytes.first == UInt8(ascii: "{") ? sign(payload: bytes) : String(decoding: bytes, as: UTF8.self)
        guard let user = runBlocking({ try? await verifier.verify(token) }) else { return }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        require(parts.count == 3, "an accepted token has \(parts.count) parts: \(token.debugDescription)")
        guard let signature = Data(base64URLEncoded: String(parts[2])),
            key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return require(false, "an accepted token's signature does not verify: \(token.debugDescription)") }
        guard let payload = Data(base64URLEncoded: String(parts[1])), let claims = try? JSONValue(parsing: payload) else { return }
        require(claims["iss"] == .string(issuer), "an accepted token's issuer is \(String(describing: claims["iss"]))")
        require(claims["aud"] == .string(audience) || claims["aud"]?.arrayValue?.contains(.string(audience)) == true,
                "an accepted token's audience is \(String(describing: claims["aud"]))")
        require(claims["exp"]?.numberValue.map { now.timeIntervalSince1970 <= $0 + 60 } == true, "an accepted token has expired")
        require(claims["sub"] == .string(user.user) && !user.user.isEmpty, "an accepted token signs in \(user.user.debugDescription)")
        require(user.tokenClaims?.keys.contains(where: IdentityClaims.registered.contains) == false, "registered claims are handed to rules")
    }
}
