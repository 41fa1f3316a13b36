import CairnProtocol
@testable import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Identity-provider users under data rules")
struct IdentityProviderRulesTests {
    @Test("a JWT's claims reach the rules as claims.NAME, and revoking the user's sign-ins ends tokens issued before it")
    func claimsAndRevocation() async throws {
        let provider = try TestIdentityProvider()
        let clock = ManualWallClock()
        let (fixture, file) = try await IdentityProviderTests.start(provider, clock: clock)
        defer { Task { await fixture.stop(); try? FileManager.default.removeItem(at: file) } }
        try await fixture.server.server.admin.setSchema(project: "field", RulesFixture.schema())
        try await RulesFixture.seed(fixture)
        let claims = TestIdentityProvider.claims("zoe", now: clock.now(), ["cairn": ["projects": ["field": "writer"]], "regions": ["south"]])
        let token = try TestIdentityProvider.token(claims, key: provider.ec)
        let reply = try await fixture.http.send(.GET, "/v1/projects/field/collections/jobs/changes", token: token)
        #expect(reply.status == 200)
        #expect(Set(try reply.decode(ChangesPage.self).changes.map(\.id)) == ["j2", "j3"])
        // explain takes the token's role and claims for such a user, who is not in the members table.
        let unknown = try await fixture.server.server.admin.explain(project: "field", user: "zoe", collection: "jobs", id: "j2")
        #expect(unknown.role == nil)
        #expect(!unknown.read.allowed)
        let why = try await fixture.server.server.admin.explain(
            project: "field", user: "zoe", collection: "jobs", id: "j2", role: .writer, claims: ["regions": ["south"]])
        #expect(why.read.allowed)
        #expect(why.read.conditions.filter(\.decides).map(\.path) == ["read.or[1]"])

        clock.advance(by: 10)
        try await fixture.server.server.storage.revokeSignIns(user: "zoe", now: clock.now())
        let refused = try await fixture.http.send(.GET, "/v1/projects/field/schema", token: token)
        #expect(refused.status == 401)
        #expect(refused.errorMessage?.contains("revoked") == true)
        clock.advance(by: 10)
        let fresh = try TestIdentityProvider.token(
            TestIdentityProvider.claims("zoe", now: clock.now(), ["cairn": ["projects": ["field": "writer"]]]), key: provider.rsa)
        #expect(try await fixture.http.send(.GET, "/v1/projects/field/schema", token: fresh).status == 200)
    }
}
