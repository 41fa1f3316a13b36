import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Health, request ids, OpenAPI, clients, digests, live notices", .timeLimit(.minutes(20)))
struct ServiceTests {
    @Test("health answers without a token; every response carries X-Request-ID, echoed when sent")
    func healthAndRequestID() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let health = try await fixture.http.send(.GET, "/health")
            #expect(health.status == 200)
            #expect(health.json?["status"] == "ok")
            #expect(try health.decode(ServerHealth.self) == ServerHealth(status: "ok", protocol: "1", version: CairnVersion.release))
            #expect((health.header("X-Request-ID") ?? "").count > 8)
            let echoed = try await fixture.http.send(.GET, "/v1/projects/field/schema", headers: ["X-Request-ID": "trace-123"])
            #expect(echoed.status == 401)
            #expect(echoed.header("X-Request-ID") == "trace-123")
            let missing = try await fixture.http.send(.GET, "/v1/nowhere")
            #expect(missing.status == 404)
            #expect(missing.errorCode == "not_found")
            #expect(missing.header("Content-Type")?.hasPrefix("application/json") == true)
        }
    }

    @Test("the OpenAPI document describes every route the server answers")
    func openAPI() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let reply = try await fixture.http.send(.GET, "/v1/openapi.json")
            #expect(reply.status == 200)
            let document = try #require(reply.json)
            #expect(document["openapi"]?.stringValue?.hasPrefix("3.1") == true)
            let paths = try #require(document["paths"]?.objectValue)
            let expected: [String: Set<String>] = [
                "/health": ["get"], "/ready": ["get"], "/metrics": ["get"], "/v1/openapi.json": ["get"], "/v1/auth/login": ["post"], "/v1/auth/refresh": ["post"],
                "/v1/auth/logout": ["post"], "/v1/projects/{project}/schema": ["get", "put"],
                "/v1/projects/{project}/collections/{collection}/changes": ["get"],
                "/v1/projects/{project}/collections/{collection}/digest": ["get"], "/v1/projects/{project}/batch": ["post"],
                "/v1/projects/{project}/events": ["get"], "/v1/projects/{project}/clients": ["post", "get"],
                "/v1/projects/{project}/files": ["get", "post"], "/v1/projects/{project}/files/{id}": ["get", "patch", "delete"],
                "/v1/projects/{project}/files/{id}/upload": ["put"], "/v1/projects/{project}/files/{id}/complete": ["post"],
                "/v1/projects/{project}/files/{id}/share": ["post"], "/v1/projects/{project}/files/{id}/unshare": ["post"],
                "/v1/projects/{project}/files/{id}/content": ["get"], "/v1/public/files/{id}": ["get"],
                "/v1/projects/{project}/members": ["get"], "/v1/projects/{project}/members/{user}": ["put", "delete"],
                "/v1/projects/{project}/members/{user}/revoke-sign-ins": ["post"], "/v1/admin/users": ["get"], "/v1/admin/projects": ["get"], "/v1/admin/backups": ["get"],
                "/v1/admin/users/{user}/revoke-sign-ins": ["post"], "/v1/projects/{project}/members/{user}/claims": ["get", "put"],
                "/v1/projects/{project}/explain": ["get"], "/v1/projects/{project}/clients/{clientId}": ["delete"],
                "/v1/projects/{project}/clients/{clientId}/diagnostics": ["put", "get"], "/v1/projects/{project}/operations/{opId}": ["get"],
                "/v1/auth/me": ["get"], "/v1/projects/{project}/collections/{collection}/view-as": ["get"],
                "/console/": ["get"], "/console/{file}": ["get"], "/v1/projects/{project}/collections/{collection}/records/{id}/field-versions": ["get"],
                "/v1/projects/{project}/actions/{action}": ["post"],
                "/v1/projects/{project}/service-keys": ["get", "post"], "/v1/projects/{project}/service-keys/{name}": ["delete"],
                "/v1/projects/{project}/webhooks": ["get", "post"], "/v1/projects/{project}/webhooks/{name}": ["delete"],
            ]
            #expect(Set(paths.keys) == Set(expected.keys))
            for (path, methods) in expected {
                let listed = Set(paths[path]?.objectValue?.keys.filter { ["get", "put", "post", "patch", "delete"].contains($0) } ?? [])
                #expect(listed == methods, "\(path)")
                // Each documented route exists on the server: it never answers "no route".
                for method in methods {
                    let concrete = path.replacingOccurrences(of: "{project}", with: "field").replacingOccurrences(of: "{collection}", with: "notes")
                        .replacingOccurrences(of: "{id}", with: "0b5e4f7a-2c1d-4e8f-9a3b-6c7d8e9f0a1b").replacingOccurrences(of: "{user}", with: "rita")
                        .replacingOccurrences(of: "{clientId}", with: "c-0").replacingOccurrences(of: "{file}", with: "app.js")
                    guard concrete != "/v1/projects/field/events" else { continue }
                    let reply = try await fixture.http.send(.init(rawValue: method.uppercased()), concrete, token: fixture.tokens["ada"])
                    #expect(!(reply.status == 404 && reply.json?["error"]?["message"]?.stringValue?.hasPrefix("No route") == true), "\(method) \(path)")
                }
            }
            // Every error code the protocol names is documented.
            let text = String(decoding: reply.body, as: UTF8.self)
            for code in ["unauthorized", "invalid_credentials", "forbidden", "not_found", "incompatible_schema", "cursor_expired",
                         "payload_too_large", "validation_failed", "rate_limited", "idempotency_mismatch", "offset_mismatch", "upload_incomplete",
                         "file_not_new", "file_not_ready", "file_too_large", "quota_exceeded", "range_not_satisfiable", "checksum_mismatch"] {
                #expect(text.contains(code), "\(code)")
            }
        }
    }

    @Test("clients register, and their pulls are remembered")
    func clients() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let reply = try await fixture.http.send(.POST, "/v1/projects/field/clients", token: fixture.tokens["rita"],
                                                    json: ["device": "iPad", "app": "Inspections 1.0"])
            #expect(reply.status == 201)
            let id = try reply.decode(ClientRegistration.self).clientId
            #expect(!id.isEmpty)
            let pull = try await fixture.http.send(.GET, "/v1/projects/field/collections/notes/changes", token: fixture.tokens["rita"],
                                                   headers: ["Cairn-Client-ID": id])
            #expect(pull.status == 200)
            let bad = try await fixture.http.send(.POST, "/v1/projects/field/clients", token: fixture.tokens["rita"],
                                                  json: ["device": .string(String(repeating: "x", count: 500))])
            #expect(bad.status == 422)
        }
    }

    @Test("the digest of a collection matches one computed from pulled records")
    func digest() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", (1...30).map { SyncOperation(opId: newOpID(), collection: "notes", id: "n\($0)", op: .create, data: [:]) })
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n7", op: .delete)])
            let reply = try await fixture.http.send(.GET, "/v1/projects/field/collections/notes/digest", token: fixture.tokens["rita"])
            let digest = try reply.decode(DigestResponse.self)
            let pulled = try await fixture.pullAll("rita", "notes").changes
            let local = CollectionDigest(pairs: pulled.map { ($0.id, $0.version) })
            #expect(digest.count == 29)
            #expect(digest.digest == local.value)
            #expect(CollectionDigest(pairs: []).value == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        }
    }

    @Test("live notices: a push sends an event naming the collection and version, without data")
    func events() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let url = fixture.server.baseURL.appendingPathComponent("v1/projects/field/events")
            let lines = try await EventStreamReader.open(url: url, token: fixture.tokens["rita"]!)
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .create, data: ["title": "secret"])])
            let event = try await lines.nextData()
            let notice = try CairnJSON.decode(ChangeNotice.self, from: Array(event.utf8))
            #expect(notice == ChangeNotice(collection: "notes", version: 1))
            #expect(!event.contains("secret"))
            await lines.close()
            let unauthorized = try await fixture.http.send(.GET, "/v1/projects/field/events")
            #expect(unauthorized.status == 401)
            let outsider = try await fixture.http.send(.GET, "/v1/projects/field/events", token: fixture.tokens["olga"])
            #expect(outsider.status == 404)
        }
    }
}
