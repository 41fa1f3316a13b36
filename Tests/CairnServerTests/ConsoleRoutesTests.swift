import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// The operators' console as the server serves it: its files with their security headers and caching, nothing
/// outside it, and the routes it relies on: `operator` in the sign-in answer, `GET /v1/auth/me`, and `view-as`.
@Suite("Console routes")
struct ConsoleRoutesTests {
    static let policy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    @Test("console files come with their type, a strict policy, nosniff, no referrer and an ETag that answers 304")
    func files() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            for (path, type) in [
                ("/console/", "text/html"), ("/console/index.html", "text/html"), ("/console/app.js", "text/javascript"),
                ("/console/page-data.js", "text/javascript"), ("/console/console.css", "text/css"),
            ] {
                let reply = try await fixture.http.send(.GET, path)
                #expect(reply.status == 200, "\(path)")
                #expect(reply.header("Content-Type")?.hasPrefix(type) == true, "\(path): \(reply.header("Content-Type") ?? "none")")
                #expect(reply.header("Content-Security-Policy") == Self.policy, "\(path)")
                #expect(reply.header("X-Content-Type-Options") == "nosniff")
                #expect(reply.header("Referrer-Policy") == "no-referrer")
                #expect(reply.header("Cache-Control") == "no-cache")
                #expect(reply.header("Set-Cookie") == nil)
                let etag = try #require(reply.header("ETag"))
                let again = try await fixture.http.send(.GET, path, headers: ["If-None-Match": etag])
                #expect(again.status == 304 && again.body.isEmpty, "\(path) revalidated")
            }
            // `/console` redirects to `/console/` (the test client follows redirects, so it ends on the page).
            let bare = try await fixture.http.send(.GET, "/console")
            #expect(bare.status == 200 && bare.header("Content-Type")?.hasPrefix("text/html") == true, "\(bare.status)")
        }
    }

    @Test("nothing but the console's own files: paths, dot files, unknown names answer 404; other methods 405")
    func traversal() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            for path in [
                "/console/..%2Fopenapi.json", "/console/%2e%2e%2fPackage.swift", "/console/..%2F..%2FPackage.swift",
                "/console/%2e%2e/v1/openapi.json", "/console/.hidden", "/console/nosuch.js", "/console/app.js%00",
                "/console/..%5C..%5CPackage.swift", "/console/sub/app.js",
            ] {
                let reply = try await fixture.http.send(.GET, path)
                #expect(reply.status == 404, "\(path) answered \(reply.status)")
                #expect(reply.errorCode == "not_found", "\(path)")
            }
            let posted = try await fixture.http.send(.POST, "/console/app.js")
            #expect(posted.status == 405 && posted.header("Allow") == "GET")
        }
    }

    @Test("the console's code puts no server data into HTML: no innerHTML, no inline script or style")
    func noMarkupFromData() throws {
        let folder = HTTPContractTests.repositoryRoot.appending(path: "Sources/CairnServer/Resources/console")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(names.contains("index.html") && names.contains("app.js"))
        for name in names {
            let text = try String(contentsOf: folder.appending(path: name), encoding: .utf8)
            for forbidden in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "style=\""] {
                #expect(!text.contains(forbidden), "\(name) uses \(forbidden)")
            }
            if name.hasSuffix(".html") {
                #expect(!text.contains("<script>") && !text.contains("<style"), "\(name) has an inline script or style")
            }
        }
    }

    @Test("login, refresh and me say whether the user is a server operator")
    func operatorFlag() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await fixture.server.server.admin.addUser("opal", password: TestServer.password, isOperator: true)
            let opal = try await fixture.http.login("opal")
            #expect(opal.user.isOperator && opal.user.projects.isEmpty)
            let ada = try await fixture.http.login("ada")
            #expect(!ada.user.isOperator && ada.user.projects == [ProjectMembership(name: "field", role: .admin)])
            let raw = try await fixture.http.send(.POST, "/v1/auth/login", value: LoginRequest(username: "ada", password: TestServer.password))
            #expect(raw.json?["user"]?["operator"] == .bool(false))

            let refreshed = try await fixture.http.send(.POST, "/v1/auth/refresh", value: RefreshRequest(refreshToken: opal.refreshToken))
            #expect(try refreshed.decode(TokenResponse.self).user.isOperator)

            #expect(try await fixture.http.send(.GET, "/v1/auth/me").status == 401)
            let me = try await fixture.http.send(.GET, "/v1/auth/me", token: opal.accessToken)
            #expect(me.status == 200 && me.header("Cache-Control") == "no-store")
            #expect(try me.decode(UserInfo.self) == UserInfo(name: "opal", projects: [], isOperator: true))
            let alice = try await fixture.http.send(.GET, "/v1/auth/me", token: fixture.tokens["alice"])
            #expect(try alice.decode(UserInfo.self) == UserInfo(name: "alice", projects: [ProjectMembership(name: "field", role: .writer)]))
            // An older server's answer, without the field, decodes as not an operator.
            let old = try CairnJSON.decode(UserInfo.self, from: Data(#"{"name": "x", "projects": []}"#.utf8))
            #expect(!old.isOperator)
        }
    }

    @Test("me for an identity provider's JWT: its roles claim's existing projects, or the members table; never an operator")
    func meWithIdentityProvider() async throws {
        let provider = try TestIdentityProvider()
        let clock = ManualWallClock()
        let (fixture, file) = try await IdentityProviderTests.start(provider, clock: clock)
        try await withCleanup({ await fixture.stop(); try? FileManager.default.removeItem(at: file) }) {
            let claimed = try TestIdentityProvider.token(
                TestIdentityProvider.claims("zoe", now: clock.now(), ["cairn": ["projects": ["field": "admin", "nosuch": "admin"]]]), key: provider.ec)
            let zoe = try await fixture.http.send(.GET, "/v1/auth/me", token: claimed)
            #expect(try zoe.decode(UserInfo.self) == UserInfo(name: "zoe", projects: [ProjectMembership(name: "field", role: .admin)]))
            // Without a roles claim, the members table decides; an operator's name in a JWT is not an operator.
            try await fixture.server.server.admin.addUser("opal", password: TestServer.password, isOperator: true)
            let plain = try TestIdentityProvider.token(TestIdentityProvider.claims("opal", now: clock.now()), key: provider.ec)
            let opal = try await fixture.http.send(.GET, "/v1/auth/me", token: plain)
            #expect(try opal.decode(UserInfo.self) == UserInfo(name: "opal", projects: [], isOperator: false))
            let ada = try TestIdentityProvider.token(TestIdentityProvider.claims("ada", now: clock.now()), key: provider.ec)
            #expect(try await fixture.http.send(.GET, "/v1/auth/me", token: ada).decode(UserInfo.self).projects == [ProjectMembership(name: "field", role: .admin)])
        }
    }

    @Test("field-versions: no token 401, non-member 404, reader and writer 403; each field's last change, 404 without a live record")
    func fieldVersions() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await fixture.server.server.admin.addUser("opal", password: TestServer.password, isOperator: true)
            let opal = try await fixture.http.login("opal").accessToken
            let created = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "notes", id: "n-1", op: .create, data: ["title": "a", "done": false])])
            let first = try #require(created.first?.record?.version)
            let patched = try await fixture.push("bob", [
                SyncOperation(opId: newOpID(), collection: "notes", id: "n-1", op: .patch, baseVersion: first, data: ["done": true])])
            let second = try #require(patched.first?.record?.version)
            let path = "/v1/projects/field/collections/notes/records/n-1/field-versions"
            for (token, status) in [(nil, 401), (fixture.tokens["olga"], 404), (fixture.tokens["rita"], 403), (fixture.tokens["alice"], 403)] {
                #expect(try await fixture.http.send(.GET, path, token: token).status == status)
            }
            for token in [fixture.tokens["ada"]!, opal] {
                let reply = try await fixture.http.send(.GET, path, token: token)
                #expect(reply.status == 200)
                #expect(reply.json?["version"] == .integer(second))
                #expect(reply.json?["fieldVersions"] == .object(["title": .integer(first), "done": .integer(second)]))
            }
            #expect(try await fixture.http.send(.GET, "/v1/projects/field/collections/notes/records/nosuch/field-versions", token: opal).status == 404)
            _ = try await fixture.push("ada", [SyncOperation(opId: newOpID(), collection: "notes", id: "n-1", op: .delete)])
            #expect(try await fixture.http.send(.GET, path, token: opal).status == 404)
            #expect(try await fixture.http.send(.GET, "/v1/projects/field/collections/nosuch/records/n-1/field-versions", token: opal).status == 404)
        }
    }

    @Test("view-as: no token 401, non-member 404, reader and writer 403; for an admin, exactly the member's own pull")
    func viewAs() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            try await fixture.server.server.admin.addUser("opal", password: TestServer.password, isOperator: true)
            let opal = try await fixture.http.login("opal").accessToken
            let path = "/v1/projects/field/collections/jobs/view-as?user=bob"
            for (token, status) in [(nil, 401), (fixture.tokens["olga"], 404), (fixture.tokens["rita"], 403), (fixture.tokens["alice"], 403)] {
                let reply = try await fixture.http.send(.GET, path, token: token)
                #expect(reply.status == status, "as \(token == nil ? "nobody" : "someone")")
            }
            for admin in [fixture.tokens["ada"]!, opal] {
                for (user, expected) in [("bob", ["j1", "j3", "j4"]), ("alice", ["j1"]), ("rita", ["j5"]), ("ada", ["j1", "j2", "j3", "j4", "j5"])] {
                    let own = try RulesFixture.split(try await fixture.pull(user, "jobs").decode(ChangesPage.self).changes).data
                    let reply = try await fixture.http.send(.GET, "/v1/projects/field/collections/jobs/view-as?user=\(user)", token: admin)
                    #expect(reply.status == 200)
                    let page = try reply.decode(ChangesPage.self)
                    #expect(RulesFixture.split(page.changes).data == own && own == Set(expected), "\(user) sees \(own)")
                    #expect(page.total == expected.count)
                }
            }
            // A filter narrows as in the member's pull; its pages follow the cursor like the member's.
            let filtered = try await fixture.http.send(
                .GET, "/v1/projects/field/collections/jobs/view-as?user=bob&where=\(Fixture.encode(#"{"field":"region","op":"eq","value":"north"}"#))",
                token: opal)
            #expect(RulesFixture.split(try filtered.decode(ChangesPage.self).changes).data == ["j1", "j4"])
            var seen: [String] = []
            var cursor: String?
            repeat {
                let query = "user=bob&limit=1" + (cursor.map { "&since=\(Fixture.encode($0))" } ?? "")
                let page = try await fixture.http.send(.GET, "/v1/projects/field/collections/jobs/view-as?\(query)", token: opal).decode(ChangesPage.self)
                seen += page.changes.map(\.id)
                cursor = page.hasMore ? page.cursor : nil
            } while cursor != nil
            #expect(Set(seen) == ["j1", "j3", "j4"] && seen.count == 3)

            let unknown = try await fixture.http.send(.GET, "/v1/projects/field/collections/jobs/view-as?user=olga", token: opal)
            #expect(unknown.status == 404 && unknown.errorCode == "not_found")
            let missing = try await fixture.http.send(.GET, "/v1/projects/field/collections/jobs/view-as", token: opal)
            #expect(missing.status == 422 && missing.json?["error"]?["details"]?["field"] == "user")
            #expect(try await fixture.http.send(.GET, "/v1/projects/field/collections/nosuch/view-as?user=bob", token: opal).status == 404)
            #expect(try await fixture.http.send(.GET, "/v1/projects/nosuch/collections/jobs/view-as?user=bob", token: opal).status == 404)
        }
    }
}
