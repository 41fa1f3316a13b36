import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// The administration routes: a project's members and clients for its admins, the server-wide lists for
/// operators, and revoking sign-ins; who may call each, paging, and what each changes.
@Suite("Administration routes")
struct AdministrationRoutesTests {
    /// The standard fixture plus `opal`, a server operator who is a member of no project, signed in.
    static func start() async throws -> (Fixture, operatorToken: String) {
        let fixture = try await Fixture.start()
        try await fixture.server.server.admin.addUser("opal", password: TestServer.password, isOperator: true)
        return (fixture, try await fixture.http.login("opal").accessToken)
    }

    @Test("project administration routes: no token 401, non-member 404, reader and writer 403, admin and operator answer")
    func projectRouteSecurity() async throws {
        let (fixture, opal) = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http
            let reader = try JSONValue(parsing: #"{"role": "reader"}"#)
            let routes: [(String, String, JSONValue?, Int)] = [
                ("GET", "/v1/projects/field/members", nil, 200),
                ("PUT", "/v1/projects/field/members/bob", reader, 200),
                ("DELETE", "/v1/projects/field/members/bob", nil, 204),
                ("POST", "/v1/projects/field/members/bob/revoke-sign-ins", nil, 204),
                ("GET", "/v1/projects/field/clients?behind=0", nil, 200),
            ]
            for (method, path, body, _) in routes {
                for (token, status) in [(nil, 401), (fixture.tokens["olga"], 404), (fixture.tokens["rita"], 403), (fixture.tokens["alice"], 403)] {
                    let reply = try await http.send(.init(rawValue: method), path, token: token, json: body)
                    #expect(reply.status == status, "\(method) \(path) as \(token.map { _ in "someone" } ?? "nobody")")
                }
            }
            for token in [fixture.tokens["ada"]!, opal] {
                for (method, path, body, status) in routes {
                    if method == "DELETE" || method == "POST" {
                        try await fixture.server.server.admin.grant(user: "bob", project: "field", role: .writer)
                    }
                    let reply = try await http.send(.init(rawValue: method), path, token: token, json: body)
                    #expect(reply.status == status, "\(method) \(path): \(String(decoding: reply.body, as: UTF8.self))")
                }
            }
            // An operator is admin only of projects that exist.
            #expect(try await http.send(.GET, "/v1/projects/nosuch/members", token: opal).status == 404)
            #expect(try await http.send(.GET, "/v1/projects/field/schema", token: opal).status == 200)
        }
    }

    @Test("server-wide routes answer operators only: no token 401, project admins and others 403")
    func serverRouteSecurity() async throws {
        let (fixture, opal) = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            for (method, path, status) in [
                ("GET", "/v1/admin/users", 200), ("GET", "/v1/admin/projects", 200), ("POST", "/v1/admin/users/rita/revoke-sign-ins", 204),
                ("GET", "/v1/admin/backups", 200),
            ] {
                #expect(try await fixture.http.send(.init(rawValue: method), path).status == 401, "\(path)")
                for user in ["ada", "alice", "olga"] {
                    let refused = try await fixture.http.send(.init(rawValue: method), path, token: fixture.tokens[user])
                    #expect(refused.status == 403, "\(path) as \(user)")
                    #expect(refused.errorCode == "forbidden")
                }
                #expect(try await fixture.http.send(.init(rawValue: method), path, token: opal).status == status, "\(path)")
            }
        }
    }

    @Test("backups: an empty list before the first, then every backup recorded, newest first, in the documented shape")
    func backups() async throws {
        let (fixture, opal) = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            let none = try await fixture.http.send(.GET, "/v1/admin/backups", token: opal)
            #expect(none.status == 200)
            #expect(none.json == JSONValue.object(["backups": .array([])]))
            let first = BackupSummary(createdAt: Date(timeIntervalSince1970: 1_800_000_000), path: "/backups/first", databaseBytes: 40960, fileCount: 3)
            let second = BackupSummary(createdAt: Date(timeIntervalSince1970: 1_800_086_400), path: "/backups/second", databaseBytes: 81920, fileCount: 0)
            try await fixture.server.server.storage.recordBackup(first)
            try await fixture.server.server.storage.recordBackup(second)
            let listed = try await fixture.http.send(.GET, "/v1/admin/backups", token: opal)
            #expect(try listed.decode(BackupList.self).backups == [second, first])
            let newest = try #require(listed.json?["backups"]?.arrayValue?.first?.objectValue)
            #expect(Set(newest.keys) == ["createdAt", "path", "databaseBytes", "fileCount"])
            #expect(newest["createdAt"] == "2027-01-16T08:00:00.000Z")
            #expect(newest["databaseBytes"] == 81920)
        }
    }

    @Test("users and projects come in pages of the asked size, key after key, with next null on the last")
    func serverLists() async throws {
        let (fixture, opal) = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            var names: [String] = []
            var after: String?
            var pages = 0
            repeat {
                let query = after.map { "?limit=2&after=\(Fixture.encode($0))" } ?? "?limit=2"
                let reply = try await fixture.http.send(.GET, "/v1/admin/users\(query)", token: opal)
                #expect(reply.json?["next"] != nil, "next is always present")
                let page = try reply.decode(AdminPage<UserSummary>.self)
                #expect(page.items.count <= 2)
                names += page.items.map(\.name)
                after = page.next
                pages += 1
            } while after != nil && pages < 10
            #expect(names == ["ada", "alice", "bob", "olga", "opal", "rita"])
            let users = try await fixture.http.send(.GET, "/v1/admin/users?limit=1000", token: opal).decode(AdminPage<UserSummary>.self)
            #expect(users.items.first { $0.name == "olga" } == UserSummary(name: "olga", isOperator: false, projects: [ProjectMembership(name: "other", role: .admin)]))
            #expect(users.items.first { $0.name == "opal" }?.isOperator == true)
            #expect(users.next == nil)

            let projects = try await fixture.http.send(.GET, "/v1/admin/projects", token: opal).decode(AdminPage<ProjectSummary>.self)
            #expect(projects.items.map(\.name) == ["field", "other"])
            #expect(projects.items.map(\.members) == [4, 1])
            for bad in ["limit=0", "limit=1001", "limit=ten", "after=%00"] {
                let reply = try await fixture.http.send(.GET, "/v1/admin/projects?\(bad)", token: opal)
                #expect(reply.status == 422, "\(bad)")
                #expect(reply.errorCode == "validation_failed")
            }
        }
    }

    @Test("members are added, changed, listed and removed; a removed member no longer sees the project")
    func members() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http, ada = fixture.tokens["ada"]
            #expect(try await http.send(.GET, "/v1/projects/field/schema", token: fixture.tokens["olga"]).status == 404)
            let added = try await http.send(.PUT, "/v1/projects/field/members/olga", token: ada, value: MemberRoleRequest(role: .reader))
            #expect(added.status == 200)
            #expect(try added.decode(ProjectMember.self) == ProjectMember(user: "olga", role: .reader))
            #expect(try await http.send(.GET, "/v1/projects/field/schema", token: fixture.tokens["olga"]).status == 200)
            _ = try await http.send(.PUT, "/v1/projects/field/members/olga", token: ada, value: MemberRoleRequest(role: .writer))
            let listed = try await http.send(.GET, "/v1/projects/field/members", token: ada).decode(AdminPage<ProjectMember>.self)
            #expect(listed.items == [
                ProjectMember(user: "ada", role: .admin), ProjectMember(user: "alice", role: .writer), ProjectMember(user: "bob", role: .writer),
                ProjectMember(user: "olga", role: .writer), ProjectMember(user: "rita", role: .reader),
            ])
            #expect(listed.next == nil)
            let paged = try await http.send(.GET, "/v1/projects/field/members?limit=2&after=alice", token: ada).decode(AdminPage<ProjectMember>.self)
            #expect(paged == AdminPage(items: [ProjectMember(user: "bob", role: .writer), ProjectMember(user: "olga", role: .writer)], next: "olga"))

            let badRole = try await http.send(.PUT, "/v1/projects/field/members/olga", token: ada, json: ["role": "owner"])
            #expect(badRole.status == 422)
            #expect(try await http.send(.PUT, "/v1/projects/field/members/nobody", token: ada, value: MemberRoleRequest(role: .reader)).status == 404)

            #expect(try await http.send(.DELETE, "/v1/projects/field/members/olga", token: ada).status == 204)
            #expect(try await http.send(.GET, "/v1/projects/field/schema", token: fixture.tokens["olga"]).status == 404)
            let again = try await http.send(.DELETE, "/v1/projects/field/members/olga", token: ada)
            #expect(again.status == 404)
            #expect(again.errorCode == "not_found")
            // Her own project is untouched.
            #expect(try await http.send(.GET, "/v1/projects/other/schema", token: fixture.tokens["olga"]).status == 200)
        }
    }

    @Test("clients are listed with how far behind each is; behind=N keeps the stuck ones")
    func clients() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http, ada = fixture.tokens["ada"]
            func register(_ user: String, _ device: String) async throws -> String {
                let reply = try await http.send(
                    .POST, "/v1/projects/field/clients", token: fixture.tokens[user], value: ClientRegistrationRequest(device: device, app: "Field"))
                return try reply.decode(ClientRegistration.self).clientId
            }
            let tablet = try await register("alice", "tablet"), phone = try await register("rita", "phone")
            _ = try await fixture.push("alice", (0..<5).map { SyncOperation(opId: newOpID(), collection: "tasks", id: "t\($0)", op: .create, data: ["title": "x"]) })
            try await fixture.server.server.storage.notePull(clientID: tablet, project: "field", version: 5, now: Date())

            let all = try await http.send(.GET, "/v1/projects/field/clients", token: ada).decode(AdminPage<ClientSummary>.self)
            #expect(Set(all.items.map(\.clientId)) == [tablet, phone])
            #expect(all.items.first { $0.clientId == tablet }.map { ($0.user, $0.device, $0.behind, $0.lastPulledVersion) } ?? ("", nil, -1, -1) == ("alice", "tablet", 0, 5))
            #expect(all.items.first { $0.clientId == phone }?.behind == 5)
            let stuck = try await http.send(.GET, "/v1/projects/field/clients?behind=1", token: ada).decode(AdminPage<ClientSummary>.self)
            #expect(stuck.items.map(\.clientId) == [phone])
            for bad in ["behind=-1", "behind=many"] {
                #expect(try await http.send(.GET, "/v1/projects/field/clients?\(bad)", token: ada).status == 422, "\(bad)")
            }
        }
    }

    @Test("revoking sign-ins ends every token of the user at once and records when; project admins only for their members")
    func revokeSignIns() async throws {
        let (fixture, opal) = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http, storage = fixture.server.server.storage
            let second = try await http.login("rita").accessToken
            #expect(try await http.send(.POST, "/v1/projects/field/members/rita/revoke-sign-ins", token: fixture.tokens["ada"]).status == 204)
            for token in [fixture.tokens["rita"], second] {
                #expect(try await http.send(.GET, "/v1/projects/field/schema", token: token).status == 401)
            }
            #expect(try await storage.signInsRevokedAt(user: "rita") != nil)
            // A new sign-in works.
            #expect(try await http.send(.GET, "/v1/projects/field/schema", token: try await http.login("rita").accessToken).status == 200)
            // olga is not a member of field: its admin cannot end her sign-ins.
            #expect(try await http.send(.POST, "/v1/projects/field/members/olga/revoke-sign-ins", token: fixture.tokens["ada"]).status == 404)
            #expect(try await http.send(.GET, "/v1/projects/other/schema", token: fixture.tokens["olga"]).status == 200)

            #expect(try await http.send(.POST, "/v1/admin/users/olga/revoke-sign-ins", token: opal).status == 204)
            #expect(try await http.send(.GET, "/v1/projects/other/schema", token: fixture.tokens["olga"]).status == 401)
            // An identity provider's user, who has no account here.
            #expect(try await http.send(.POST, "/v1/admin/users/\(Fixture.encode("auth0|5f7c"))/revoke-sign-ins", token: opal).status == 204)
            #expect(try await storage.signInsRevokedAt(user: "auth0|5f7c") != nil)
        }
    }
}
