import CairnProtocol
@testable import CairnServer
import CairnTesting
import Foundation
import Testing

/// Inputs the fuzz targets (Fuzz/, scripts/fuzz/run.sh) found breaking a property of a server parser, kept so the
/// fixes stay fixed.
@Suite("Fuzz regressions: server parsers")
struct ServerFuzzRegressionTests {
    /// `jwt`: claims that name `sub` twice, signed by the provider, signed in the first `sub` (jwt-kit's JSON decoder
    /// reads the first of two members; RFC 7519 says refuse, or read the last).
    @Test("a token whose claims repeat a name is refused")
    func repeatedClaims() async throws {
        let provider = try TestIdentityProvider()
        let clock = ManualWallClock()
        let file = TestScratch.url("jwks", suffix: ".json")
        try provider.jwks().write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let verifier = try JWTVerifier(
            configuration: IdentityProviderConfiguration(jwks: file.path, issuer: TestIdentityProvider.issuer, audience: TestIdentityProvider.audience),
            clock: clock)
        let exp = Int64(clock.now().timeIntervalSince1970) + 300
        func token(_ claims: String) throws -> String {
            let header = TestIdentityProvider.json(["alg": "EdDSA", "kid": .string(provider.ed.kid), "typ": "JWT"])
            let input = TestIdentityProvider.base64URL(header) + "." + TestIdentityProvider.base64URL(Data(claims.utf8))
            return input + "." + TestIdentityProvider.base64URL(try provider.ed.sign(Data(input.utf8)))
        }
        let issuer = TestIdentityProvider.issuer, audience = TestIdentityProvider.audience
        let single = try token(#"{"iss":"\#(issuer)","aud":"\#(audience)","sub":"zoe","exp":\#(exp)}"#)
        #expect(try await verifier.verify(single).user == "zoe")
        let repeated = try token(#"{"iss":"\#(issuer)","aud":"\#(audience)","sub":"mallory","sub":"zoe","exp":\#(exp)}"#)
        await #expect(throws: ErrorBody.self) { try await verifier.verify(repeated) }
        #expect(JWTVerifier.repeatsAClaim(repeated))
        #expect(!JWTVerifier.repeatsAClaim(single))
    }
}

extension ServerFuzzRegressionTests {
    /// `jwks`: an RSA key with a private exponent `d` and an even modulus crashed the server when its key collection
    /// was made (swift-crypto force-unwraps a Montgomery context that an even modulus cannot have). Keys with a `d`
    /// are left out: a JWKS publishes public keys.
    @Test("keys with private material are left out of a JWKS, and making the collection does not crash")
    func privateKeysLeftOut() async throws {
        let privateRSA = #"{"kty":"RSA","kid":"r1","use":"sig","alg":"RS256","d":"AQABnc","n":"AQAB","e":"AQAB"}"#
        let publicEd = #"{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#
        #expect(throws: JWKSError.self) { try JWKSKeys.parse(Data(#"{"keys":[\#(privateRSA)]}"#.utf8)) }
        let keys = try JWKSKeys.parse(Data(#"{"keys":[\#(privateRSA),\#(publicEd)]}"#.utf8))
        #expect(keys.algorithm(of: "r1") == nil)
        #expect(keys.algorithm(of: "k1") == "EdDSA")
        _ = await keys.collection()
    }
}
