import CairnProtocol
@testable import CairnServer
import CairnTesting
import Foundation
import Testing

/// Service keys: who may make, list and revoke them (per route), and what a key may do once made.
@Suite("Service keys", .timeLimit(.minutes(20)))
struct ServiceKeyTests {
    @Test("service-key and webhook routes: no token 401, non-member 404, reader and writer 403, admin and operator answer")
    func routeSecurity() async throws {
        let (fixture, opal) = try await AdministrationRoutesTests.start()
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http
            let key: JSONValue = ["name": "erp", "role": "writer"]
            let hook: JSONValue = ["name": "erp", "url": "http://127.0.0.1:9/hook", "secret": "0123456789abcdef"]
            let routes: [(String, String, JSONValue?, Int)] = [
                ("POST", "/v1/projects/field/service-keys", key, 201),
                ("GET", "/v1/projects/field/service-keys", nil, 200),
                ("DELETE", "/v1/projects/field/service-keys/erp", nil, 204),
                ("POST", "/v1/projects/field/webhooks", hook, 201),
                ("GET", "/v1/projects/field/webhooks", nil, 200),
                ("DELETE", "/v1/projects/field/webhooks/erp", nil, 204),
            ]
            for (method, path, body, _) in routes {
                for (token, status) in [(nil, 401), (fixture.tokens["olga"], 404), (fixture.tokens["rita"], 403), (fixture.tokens["alice"], 403)] {
                    let reply = try await http.send(.init(rawValue: method), path, token: token, json: body)
                    #expect(reply.status == status, "\(method) \(path): \(String(decoding: reply.body, as: UTF8.self))")
                }
            }
            for token in [fixture.tokens["ada"]!, opal] {
                for (method, path, body, status) in routes {
                    let reply = try await http.send(.init(rawValue: method), path, token: token, json: body)
                    #expect(reply.status == status, "\(method) \(path): \(String(decoding: reply.body, as: UTF8.self))")
                }
            }
            // Gone once deleted; unknown projects are not found even for operators.
            #expect(try await http.send(.DELETE, "/v1/projects/field/service-keys/erp", token: opal).status == 404)
            #expect(try await http.send(.DELETE, "/v1/projects/field/webhooks/erp", token: opal).status == 404)
            #expect(try await http.send(.GET, "/v1/projects/nosuch/webhooks", token: opal).status == 404)
            // Bad input is refused with the field named.
            for bad: JSONValue in [
                ["name": "Bad Name", "url": "http://127.0.0.1:9/", "secret": "0123456789abcdef"],
                ["name": "ok", "url": "ftp://x/", "secret": "0123456789abcdef"],
                ["name": "ok", "url": "http://127.0.0.1:9/", "secret": "short"],
                ["name": "ok", "url": "http://127.0.0.1:9/", "secret": "0123456789abcdef", "collections": ["No Such"]],
            ] {
                let reply = try await http.send(.POST, "/v1/projects/field/webhooks", token: opal, json: bad)
                #expect(reply.status == 422 && reply.errorCode == "validation_failed", "\(bad)")
            }
            #expect(try await http.send(.POST, "/v1/projects/field/service-keys", token: opal, json: ["name": "x", "role": "boss"]).status == 422)
        }
    }

    @Test("a key signs in as service:NAME with its role in its project only; it is shown once, listed without its text, refused once revoked")
    func keyLifecycle() async throws {
        try await withFixture { fixture in
            let http = fixture.http
            let made = try await http.send(.POST, "/v1/projects/field/service-keys", token: fixture.tokens["ada"], json: ["name": "erp", "role": "writer"])
            #expect(made.status == 201)
            let key = try made.decode(NewServiceKey.self)
            #expect(key.key.hasPrefix("cairn_sk_") && key.role == .writer)
            let again = try await http.send(.POST, "/v1/projects/field/service-keys", token: fixture.tokens["ada"], json: ["name": "erp", "role": "reader"])
            #expect(again.status == 409 && again.errorCode == "already_exists")

            // It writes as service:erp.
            let push = try await http.send(
                .POST, "/v1/projects/field/batch", token: key.key,
                value: BatchRequest(operations: [SyncOperation(opId: newOpID(), collection: "tasks", id: "job-1", op: .create, data: ["title": "from ERP"])]))
            #expect(push.status == 200, "\(String(decoding: push.body, as: UTF8.self))")
            let page = try await fixture.pull("alice", "tasks").decode(ChangesPage.self)
            #expect(page.changes.map(\.updatedBy) == ["service:erp"])
            // Its role is its own: it is no admin, and no member of another project.
            #expect(try await http.send(.GET, "/v1/projects/field/members", token: key.key).status == 403)
            #expect(try await http.send(.GET, "/v1/projects/other/collections/tasks/changes", token: key.key).status == 404)
            let me = try await http.send(.GET, "/v1/auth/me", token: key.key)
            #expect(me.status == 200 && String(decoding: me.body, as: UTF8.self).contains("\"field\""))
            #expect(!String(decoding: me.body, as: UTF8.self).contains("\"other\""))

            // Listed with when it was last used, never with its text.
            let listed = try await http.send(.GET, "/v1/projects/field/service-keys", token: fixture.tokens["ada"])
            #expect(!String(decoding: listed.body, as: UTF8.self).contains(key.key))
            let keys = try listed.decode(ServiceKeyList.self).serviceKeys
            #expect(keys.map(\.name) == ["erp"] && keys[0].lastUsedAt != nil)

            // A reader key reads and may not push.
            let reader = try await fixture.server.server.admin.addServiceKey(name: "report", project: "field", role: .reader)
            #expect(try await http.send(.GET, "/v1/projects/field/collections/tasks/changes", token: reader.key).status == 200)
            let refused = try await http.send(
                .POST, "/v1/projects/field/batch", token: reader.key,
                value: BatchRequest(operations: [SyncOperation(opId: newOpID(), collection: "tasks", id: "job-2", op: .create, data: ["title": "x"])]))
            #expect(refused.status == 403)

            // Even an admin key makes no keys and adds no webhooks: they would outlive it.
            let boss = try await fixture.server.server.admin.addServiceKey(name: "boss", project: "field", role: .admin)
            #expect(try await http.send(.GET, "/v1/projects/field/members", token: boss.key).status == 200)
            let more = try await http.send(.POST, "/v1/projects/field/service-keys", token: boss.key, json: ["name": "more", "role": "admin"])
            #expect(more.status == 403 && more.errorCode == "forbidden")
            let hook = try await http.send(
                .POST, "/v1/projects/field/webhooks", token: boss.key,
                json: ["name": "out", "url": "http://127.0.0.1:9/", "secret": "0123456789abcdef"])
            #expect(hook.status == 403)
            // The service: namespace is the keys': no account takes a name in it.
            await #expect(throws: ErrorBody.self) { try await fixture.server.server.admin.addUser("service:erp", password: TestServer.password) }

            // Revoked: refused at once; a made-up key never signs in.
            #expect(try await http.send(.DELETE, "/v1/projects/field/service-keys/erp", token: fixture.tokens["ada"]).status == 204)
            let after = try await http.send(.GET, "/v1/projects/field/collections/tasks/changes", token: key.key)
            #expect(after.status == 401 && after.errorCode == "unauthorized")
            #expect(try await http.send(.GET, "/v1/projects/field/collections/tasks/changes", token: "cairn_sk_madeup").status == 401)
        }
    }

    @Test("data rules bind a reader key like a reader; the notice filter reads its role again per notice: revoked, it admits nothing")
    func rulesAndNotices() async throws {
        try await withFixture { fixture in
            let admin = fixture.server.server.admin
            try await admin.setSchema(project: "field", RulesFixture.schema())
            let made = try await admin.addServiceKey(name: "erp", project: "field", role: .reader)
            _ = try await fixture.push("ada", [RulesFixture.job("mine", assignee: "service:erp", region: "south")])
            _ = try await fixture.push("ada", [RulesFixture.job("carls", assignee: "carl", region: "south")])
            // Pulled through the rules: only the job assigned to service:erp.
            let reply = try await fixture.http.send(.GET, "/v1/projects/field/collections/jobs/changes", token: made.key)
            #expect(try reply.decode(ChangesPage.self).changes.map(\.id) == ["mine"])

            let access = AccessControl(storage: fixture.server.server.storage)
            let stored = try #require(try await fixture.server.server.storage.serviceKey(hash: TokenService.hash(made.key)))
            let key = SignedInUser(serviceKey: stored)
            var filter = try await NoticeFilter(access: access, caller: try #require(try await access.current(key, in: "field")))
            func notice(_ id: String, assignee: String) async throws -> ChangeNotice {
                let result = try await fixture.push("ada", [RulesFixture.job(id, assignee: assignee, region: "south")])
                return ChangeNotice(collection: "jobs", version: try #require(result.first?.record?.version))
            }
            #expect(await filter.admits(try await notice("j1", assignee: "service:erp")))
            #expect(!(await filter.admits(try await notice("j2", assignee: "carl"))))
            try await admin.revokeServiceKey(name: "erp", project: "field")
            #expect(!(await filter.admits(try await notice("j3", assignee: "service:erp"))))
            #expect(try await access.current(key, in: "field") == nil)
        }
    }

    private func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) { try await body(fixture) }
    }
}
