import CairnProtocol
@testable import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Identity-provider users under data rules", .timeLimit(.minutes(20)))
struct IdentityProviderRulesTests {
    @Test("a JWT's claims reach the rules as claims.NAME, and revoking the user's sign-ins ends tokens issued before it")
    func claimsAndRevocation() async throws {
        let provider = try TestIdentityProvider()
        let clock = ManualWallClock()
        let (fixture, file) = try await IdentityProviderTests.start(provider, clock: clock)
        try await withCleanup({ await fixture.stop(); try? FileManager.default.removeItem(at: file) }) {
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

    @Test("an identity-provider user whose role comes from the members table, demoted while its event stream is open, hears only what it may read")
    func noticesFollowDemotion() async throws {
        let provider = try TestIdentityProvider()
        let clock = ManualWallClock()
        let (fixture, file) = try await IdentityProviderTests.start(provider, clock: clock)
        try await withCleanup({ await fixture.stop(); try? FileManager.default.removeItem(at: file) }) {
            let admin = fixture.server.server.admin
            try await admin.setSchema(project: "field", RulesFixture.schema())
            try await admin.addUser("zoe", password: TestServer.password, isOperator: false)
            try await admin.grant(user: "zoe", project: "field", role: .admin)
            // No roles claim: zoe's role is read from the members table.
            let token = try TestIdentityProvider.token(TestIdentityProvider.claims("zoe", now: clock.now(), [:]), key: provider.ec)
            let events = try await EventStreamReader.open(url: fixture.server.baseURL.appendingPathComponent("v1/projects/field/events"), token: token)
            try await withCleanup({ await events.close() }) {
                func push(_ id: String, assignee: String) async throws -> Int64 {
                    let result = try await fixture.push("ada", [RulesFixture.job(id, assignee: assignee, region: "south")])
                    return try #require(result.first?.record?.version)
                }
                func nextNotice() async throws -> ChangeNotice {
                    try CairnJSON.decode(ChangeNotice.self, from: Array(try await events.nextData().utf8))
                }
                // As admin, zoe hears of carl's job.
                let carls = try await push("j1", assignee: "carl")
                #expect(try await nextNotice().version == carls)
                // Demoted to reader, bound by the read rule: carl's next job is withheld, her own is told.
                try await admin.grant(user: "zoe", project: "field", role: .reader)
                _ = try await push("j2", assignee: "carl")
                let hers = try await push("j3", assignee: "zoe")
                #expect(try await nextNotice().version == hers)
            }
        }
    }

    @Test("the notice filter reads the role of such a user again for each notice: removed, it admits nothing; demoted, only what it may read")
    func noticeFilterRereadsMembership() async throws {
        let provider = try TestIdentityProvider()
        let (fixture, file) = try await IdentityProviderTests.start(provider, clock: ManualWallClock())
        try await withCleanup({ await fixture.stop(); try? FileManager.default.removeItem(at: file) }) {
            let admin = fixture.server.server.admin
            try await admin.setSchema(project: "field", RulesFixture.schema())
            try await admin.addUser("zoe", password: TestServer.password, isOperator: false)
            try await admin.grant(user: "zoe", project: "field", role: .admin)
            let access = AccessControl(storage: fixture.server.server.storage)
            // As a JWT without a roles claim signs zoe in: claims at hand, the role from the members table.
            let zoe = SignedInUser(user: "zoe", family: nil, tokenClaims: ["team": "ops"], tokenRoles: nil)
            var filter = try await NoticeFilter(access: access, caller: try #require(try await access.current(zoe, in: "field")))
            func notice(_ id: String, assignee: String) async throws -> ChangeNotice {
                let result = try await fixture.push("ada", [RulesFixture.job(id, assignee: assignee, region: "south")])
                return ChangeNotice(collection: "jobs", version: try #require(result.first?.record?.version))
            }
            #expect(await filter.admits(try await notice("j1", assignee: "carl")))
            try await admin.grant(user: "zoe", project: "field", role: .reader)
            #expect(!(await filter.admits(try await notice("j2", assignee: "carl"))))
            #expect(await filter.admits(try await notice("j3", assignee: "zoe")))
            try await admin.removeMember(user: "zoe", project: "field")
            #expect(!(await filter.admits(try await notice("j4", assignee: "zoe"))))
        }
    }
}
