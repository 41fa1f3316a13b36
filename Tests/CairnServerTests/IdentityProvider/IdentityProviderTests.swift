import CairnProtocol
@testable import CairnServer
import CairnTesting
import Crypto
import Foundation
import Testing

@Suite("Sign-in through an identity provider")
struct IdentityProviderTests {
    let schemaPath = "/v1/projects/field/schema"

    /// A fixture whose server accepts the provider's JWTs, its JWKS in a file.
    static func start(_ provider: TestIdentityProvider, clock: ManualWallClock, rolesClaim: String = "cairn") async throws -> (Fixture, URL) {
        let file = TestScratch.url("jwks", suffix: ".json")
        try provider.jwks().write(to: file)
        let fixture = try await Fixture.start(clock: clock) { configuration in
            configuration.identityProvider = IdentityProviderConfiguration(
                jwks: file.path, issuer: TestIdentityProvider.issuer, audience: TestIdentityProvider.audience, rolesClaim: rolesClaim)
        }
        return (fixture, file)
    }

    static let writerOfField: [String: JSONValue?] = ["cairn": ["projects": ["field": "writer"]]]

    @Test("tokens signed with RS256, ES256 and EdDSA sign in")
    func algorithms() async throws {
        let provider = try TestIdentityProvider()
        let clock = ManualWallClock()
        let (fixture, file) = try await Self.start(provider, clock: clock)
        try await withCleanup({ await fixture.stop(); try? FileManager.default.removeItem(at: file) }) {
            for key in [provider.rsa, provider.ec, provider.ed] {
                let token = try TestIdentityProvider.token(TestIdentityProvider.claims("zoe", now: clock.now(), Self.writerOfField), key: key)
                let reply = try await fixture.http.send(.GET, schemaPath, token: token)
                #expect(reply.status == 200, "\(key.algorithm): \(reply.errorMessage ?? "")")
            }
            // Cairn's own tokens keep working beside them.
            #expect(try await fixture.http.send(.GET, schemaPath, token: fixture.tokens["alice"]).status == 200)
        }
    }

    @Test("each bad token is refused with 401 and a reason that names the check")
    func refusals() async throws {
        let provider = try TestIdentityProvider()
        let clock = ManualWallClock()
        let (fixture, file) = try await Self.start(provider, clock: clock)
        try await withCleanup({ await fixture.stop(); try? FileManager.default.removeItem(at: file) }) {
            let now = clock.now()
            func claims(_ extra: [String: JSONValue?]) -> [String: JSONValue] {
                TestIdentityProvider.claims("zoe", now: now, Self.writerOfField.merging(extra) { $1 })
            }
            let secondsNow = Int64(now.timeIntervalSince1970)
            let rsaPublicKeyPEM = publicKeyText(provider)
            let valid = try TestIdentityProvider.token(claims([:]), key: provider.ec)
            var tampered = valid
            tampered.removeLast(4)
            tampered += valid.hasSuffix("AAAA") ? "BBBB" : "AAAA"
            let cases: [(String, String, String)] = [
                ("alg none", TestIdentityProvider.token(claims([:]), algorithm: "none", kid: "rsa-1") { _ in Data() }, "alg none"),
                ("HMAC with the public key as secret", TestIdentityProvider.token(claims([:]), algorithm: "HS256", kid: "rsa-1") { input in
                    Data(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: Data(rsaPublicKeyPEM.utf8))))
                }, "HMAC"),
                ("unknown kid", try TestIdentityProvider.token(claims([:]), key: provider.ec, header: ["kid": "nobody"]), "\"nobody\" is not in"),
                ("algorithm not the key's", try TestIdentityProvider.token(claims([:]), key: provider.ec, header: ["kid": "rsa-1"]), "not the one of key"),
                ("bad signature", tampered, "signature"),
                ("expired", try TestIdentityProvider.token(claims(["exp": .integer(secondsNow - 61)]), key: provider.rsa), "expired"),
                ("no expiry", try TestIdentityProvider.token(claims(["exp": nil]), key: provider.rsa), "no expiry"),
                ("not yet valid", try TestIdentityProvider.token(claims(["nbf": .integer(secondsNow + 61)]), key: provider.ed), "not valid before"),
                ("wrong issuer", try TestIdentityProvider.token(claims(["iss": "https://evil.example/"]), key: provider.ed), "issuer"),
                ("wrong audience", try TestIdentityProvider.token(claims(["aud": ["other-app"]]), key: provider.ed), "audience"),
                ("no subject", try TestIdentityProvider.token(claims(["sub": nil]), key: provider.ed), "subject"),
                ("roles claim of the wrong shape", try TestIdentityProvider.token(claims(["cairn": ["field": "writer"]]), key: provider.ed), "roles claim"),
                ("unknown role", try TestIdentityProvider.token(claims(["cairn": ["projects": ["field": "boss"]]]), key: provider.ed), "no known role"),
                ("not a JWT", "a.b.c", "well-formed"),
            ]
            for (name, token, reason) in cases {
                let reply = try await fixture.http.send(.GET, schemaPath, token: token)
                #expect(reply.status == 401, "\(name)")
                #expect(reply.errorCode == "unauthorized", "\(name)")
                #expect(reply.errorMessage?.contains(reason) == true, "\(name): \(reply.errorMessage ?? "")")
                #expect(reply.errorMessage?.contains(token) == false, "\(name) echoes the token")
            }
            // Within the allowed skew of 60 s, a token just expired or not quite valid yet is still taken.
            let late = try TestIdentityProvider.token(claims(["exp": .integer(secondsNow - 30)]), key: provider.rsa)
            #expect(try await fixture.http.send(.GET, schemaPath, token: late).status == 200)
            let early = try TestIdentityProvider.token(claims(["nbf": .integer(secondsNow + 30)]), key: provider.rsa)
            #expect(try await fixture.http.send(.GET, schemaPath, token: early).status == 200)
            // An audience list that includes Cairn's is fine.
            let listed = try TestIdentityProvider.token(claims(["aud": ["other-app", .string(TestIdentityProvider.audience)]]), key: provider.ec)
            #expect(try await fixture.http.send(.GET, schemaPath, token: listed).status == 200)
        }
    }

    @Test("a key added to a JWKS served over HTTP is picked up on an unknown kid, at most once per 30 s")
    func rotation() async throws {
        let provider = try TestIdentityProvider()
        let clock = ManualWallClock()
        let jwks = JWKSServer(provider.jwks([provider.rsa]))
        try await jwks.start()
        let fixture = try await Fixture.start(clock: clock) { configuration in
            configuration.identityProvider = IdentityProviderConfiguration(
                jwks: jwks.url, issuer: TestIdentityProvider.issuer, audience: TestIdentityProvider.audience)
        }
        try await withCleanup({ await fixture.stop(); await jwks.stop() }) {
            func status(_ key: TestIdentityProvider.Key) async throws -> Int {
                let token = try TestIdentityProvider.token(TestIdentityProvider.claims("zoe", now: clock.now(), Self.writerOfField), key: key)
                return try await fixture.http.send(.GET, schemaPath, token: token).status
            }
            #expect(try await status(provider.rsa) == 200)
            #expect(try await status(provider.rsa) == 200)
            #expect(jwks.fetchCount == 1)
            // The provider rotates: a new key joins the set.
            jwks.serve(provider.jwks([provider.rsa, provider.ec]))
            // Just after a fetch, an unknown kid does not make the server fetch again (rate limit).
            #expect(try await status(provider.ec) == 401)
            #expect(jwks.fetchCount == 1)
            clock.advance(by: 31)
            #expect(try await status(provider.ec) == 200)
            #expect(jwks.fetchCount == 2)
            // Known keys are served from the cache until its max-age (600 s) ends.
            #expect(try await status(provider.rsa) == 200)
            #expect(jwks.fetchCount == 2)
            clock.advance(by: 600)
            #expect(try await status(provider.ec) == 200)
            #expect(jwks.fetchCount == 3)
            // A failed fetch (the provider answers nonsense) keeps the keys there were.
            jwks.serve(Data("<html>maintenance</html>".utf8))
            clock.advance(by: 601)
            #expect(try await status(provider.ec) == 200)
            #expect(jwks.fetchCount == 4)
            // A kid unknown even after a fetch stays refused, saying why the fetch failed.
            clock.advance(by: 31)
            let stranger = try await fixture.http.send(
                .GET, schemaPath, token: try TestIdentityProvider.token(TestIdentityProvider.claims("zoe", now: clock.now()), key: provider.ed))
            #expect(stranger.status == 401)
            #expect(stranger.errorMessage?.contains("could not be fetched") == true, "\(stranger.errorMessage ?? "")")
            #expect(jwks.fetchCount == 5)
        }
    }

    @Test("a user with the roles claim pulls, pushes and registers a client without being in the users table")
    func rolesClaim() async throws {
        let provider = try TestIdentityProvider()
        let clock = ManualWallClock()
        let (fixture, file) = try await Self.start(provider, clock: clock)
        try await withCleanup({ await fixture.stop(); try? FileManager.default.removeItem(at: file) }) {
            let http = fixture.http
            let writer = try TestIdentityProvider.token(TestIdentityProvider.claims("auth0|zoe", now: clock.now(), Self.writerOfField), key: provider.rsa)
            let client = try await http.send(.POST, "/v1/projects/field/clients", token: writer, json: ["device": "tablet", "app": "field 1.0"])
            #expect(client.status == 201 || client.status == 200, "\(client.errorMessage ?? "")")
            let push = try await http.send(
                .POST, "/v1/projects/field/batch", token: writer,
                value: BatchRequest(operations: [SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .create, data: ["title": "from the provider"])]))
            #expect(push.status == 200, "\(push.errorMessage ?? "")")
            let results = try push.decode(BatchResponse.self).results
            #expect(results.first?.status == .applied)
            let pulled = try await http.send(.GET, "/v1/projects/field/collections/notes/changes", token: writer).decode(ChangesPage.self)
            #expect(pulled.changes.map(\.id) == ["n1"])

            // Files: create, send the bytes, complete, download.
            let bytes = Data("photo bytes".utf8)
            let created = try await http.send(
                .POST, "/v1/projects/field/files", token: writer,
                value: NewFileRequest(name: "p.jpg", contentType: "image/jpeg", size: Int64(bytes.count), sha256: nil, tags: [], public: false, attachTo: nil))
            #expect(created.status == 201, "\(created.errorMessage ?? "")")
            let uploaded = try created.decode(FileMetadata.self)
            #expect(try await http.send(.PUT, uploaded.uploadUrl, token: writer, body: bytes).status < 300)
            #expect(try await http.send(.POST, "/v1/projects/field/files/\(uploaded.id)/complete", token: writer).status == 200)
            let download = try await http.send(.GET, "/v1/projects/field/files/\(uploaded.id)/content", token: writer)
            #expect(download.status == 200)
            #expect(download.body == bytes)

            // A reader by the claim may pull but not push; a project the claim does not name is not found.
            let reader = try TestIdentityProvider.token(
                TestIdentityProvider.claims("auth0|ray", now: clock.now(), ["cairn": ["projects": ["field": "reader"]]]), key: provider.ec)
            #expect(try await http.send(.GET, "/v1/projects/field/collections/notes/changes", token: reader).status == 200)
            let refused = try await http.send(
                .POST, "/v1/projects/field/batch", token: reader,
                value: BatchRequest(operations: [SyncOperation(opId: newOpID(), collection: "notes", id: "n2", op: .create, data: ["title": "x"])]))
            #expect(refused.status == 403)
            #expect(try await http.send(.GET, "/v1/projects/other/schema", token: reader).status == 404)
            // The claim names a project that does not exist: not found either.
            let ghost = try TestIdentityProvider.token(
                TestIdentityProvider.claims("auth0|ray", now: clock.now(), ["cairn": ["projects": ["ghost": "admin"]]]), key: provider.ec)
            #expect(try await http.send(.GET, "/v1/projects/ghost/schema", token: ghost).status == 404)
            // The claim outranks the members table: alice is a writer there, a reader by her token.
            let alice = try TestIdentityProvider.token(
                TestIdentityProvider.claims("alice", now: clock.now(), ["cairn": ["projects": ["field": "reader"]]]), key: provider.ed)
            #expect(try await http.send(.PUT, schemaPath, token: alice, value: Fixture.schema).status == 403)
            // Logout of a JWT revokes nothing (the provider owns it) and answers 204.
            #expect(try await http.send(.POST, "/v1/auth/logout", token: writer).status == 204)
            #expect(try await http.send(.GET, schemaPath, token: writer).status == 200)
        }
    }

    @Test("without the roles claim, membership and role come from the members table")
    func membersTable() async throws {
        let provider = try TestIdentityProvider()
        let clock = ManualWallClock()
        let (fixture, file) = try await Self.start(provider, clock: clock, rolesClaim: "https://cairn.example/roles")
        try await withCleanup({ await fixture.stop(); try? FileManager.default.removeItem(at: file) }) {
            let http = fixture.http
            let ada = try TestIdentityProvider.token(TestIdentityProvider.claims("ada", now: clock.now()), key: provider.rsa)
            #expect(try await http.send(.PUT, schemaPath, token: ada, value: Fixture.schema).status == 200)
            let rita = try TestIdentityProvider.token(TestIdentityProvider.claims("rita", now: clock.now()), key: provider.rsa)
            #expect(try await http.send(.GET, schemaPath, token: rita).status == 200)
            #expect(try await http.send(.PUT, schemaPath, token: rita, value: Fixture.schema).status == 403)
            let stranger = try TestIdentityProvider.token(TestIdentityProvider.claims("nobody", now: clock.now()), key: provider.rsa)
            #expect(try await http.send(.GET, schemaPath, token: stranger).status == 404)
            // The configured claim name is the one read: `cairn` is just another claim here.
            let named = try TestIdentityProvider.token(
                TestIdentityProvider.claims("nobody", now: clock.now(), ["https://cairn.example/roles": ["projects": ["field": "reader"]]]), key: provider.rsa)
            #expect(try await http.send(.GET, schemaPath, token: named).status == 200)
        }
    }

    @Test("every claim but the registered ones and the roles claim reaches the caller's claims")
    func claims() throws {
        let verifier = try JWTVerifier(
            configuration: IdentityProviderConfiguration(
                jwks: "http://127.0.0.1:9/jwks.json", issuer: TestIdentityProvider.issuer, audience: TestIdentityProvider.audience),
            clock: ManualWallClock())
        var claims = TestIdentityProvider.claims("zoe", now: ManualWallClock().now(), Self.writerOfField)
        claims["regions"] = ["north", "east"]
        claims["email"] = "zoe@example.test"
        claims["jti"] = "j-1"
        claims["nbf"] = 0
        let user = try verifier.user(try JSONDecoder().decode(IdentityClaims.self, from: TestIdentityProvider.json(.object(claims))))
        #expect(user.user == "zoe")
        #expect(user.family == nil)
        #expect(user.tokenRoles == ["field": .writer])
        #expect(user.tokenClaims == ["regions": ["north", "east"], "email": "zoe@example.test"])
        claims["cairn"] = nil
        #expect(try verifier.user(try JSONDecoder().decode(IdentityClaims.self, from: TestIdentityProvider.json(.object(claims)))).tokenRoles == nil)
    }

    @Test("a server without an identity provider refuses JWTs with a reason")
    func noProvider() async throws {
        let provider = try TestIdentityProvider()
        let clock = ManualWallClock()
        let fixture = try await Fixture.start(clock: clock)
        try await withCleanup({ await fixture.stop() }) {
            let token = try TestIdentityProvider.token(TestIdentityProvider.claims("zoe", now: clock.now(), Self.writerOfField), key: provider.rsa)
            let reply = try await fixture.http.send(.GET, schemaPath, token: token)
            #expect(reply.status == 401)
            #expect(reply.errorMessage?.contains("accepts no identity provider tokens") == true)
        }
    }

    @Test("a JWKS file that cannot be used stops the server from starting")
    func badFile() async throws {
        let directory = TestScratch.url("jwks")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(String, Data?)] = [
            ("missing", nil), ("not JSON", Data("nope".utf8)),
            ("only an HMAC key", Data(#"{"keys": [{"kty": "oct", "kid": "h", "k": "c2VjcmV0"}]}"#.utf8)),
        ]
        for (name, contents) in cases {
            let file = directory.appendingPathComponent("\(name).json")
            if let contents { try contents.write(to: file) }
            var configuration = ServerConfiguration(dataDirectory: directory.appendingPathComponent("data-\(UUID().uuidString)"))
            configuration.identityProvider = IdentityProviderConfiguration(jwks: file.path, issuer: "i", audience: "a")
            #expect(throws: JWKSError.self, "\(name)") { _ = try SyncServer(configuration: configuration) }
        }
    }
}

/// The provider's RSA public key as text: what an attacker would use as an HMAC secret.
private func publicKeyText(_ provider: TestIdentityProvider) -> String {
    guard case .object(let jwk) = provider.rsa.jwk, case .string(let n) = jwk["n"] else { return "" }
    return "-----BEGIN PUBLIC KEY-----\n\(n)\n-----END PUBLIC KEY-----\n"
}

extension HTTPReply {
    /// The error body's message.
    var errorMessage: String? { json?["error"]?["message"]?.stringValue }
}
