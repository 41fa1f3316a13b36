import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// `POST /v1/projects/{project}/actions/{action}`: who may call (401, 404, 403 by the action's role), what the
/// backend receives (signed, with the caller), what comes back, and that a key calls the backend once.
@Suite("Action routes", .timeLimit(.minutes(20)))
struct ActionRoutesTests {
    /// Runs `body` with the standard fixture and a backend answering with `handler` (``Fixture/withActionBackend(_:_:)``).
    static func withBackend(
        _ handler: @escaping TestActionBackend.Handler, _ body: (Fixture, TestActionBackend) async throws -> Void
    ) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await fixture.withActionBackend(handler) { backend in try await body(fixture, backend) }
        }
    }

    static let echo: TestActionBackend.Handler = { call in .json(["echo": call.arguments, "user": call.caller["user"] ?? nil]) }

    static func path(_ action: String, project: String = Fixture.project) -> String { "/v1/projects/\(project)/actions/\(action)" }

    @Test("no token 401, non-member and unknown project 404, unknown action 404, a role below the action's 403, members with it 200")
    func security() async throws {
        try await Self.withBackend(Self.echo) { fixture, backend in
            let body: JSONValue = ["arguments": ["jobId": "j-7"]]
            let cases: [(String?, String, Int)] = [
                (nil, Self.path("closeJob"), 401),
                (fixture.tokens["olga"], Self.path("closeJob"), 404),
                (fixture.tokens["alice"], Self.path("closeJob", project: "nowhere"), 404),
                (fixture.tokens["alice"], Self.path("openJob"), 404),
                (fixture.tokens["rita"], Self.path("openJob"), 404),
                (fixture.tokens["rita"], Self.path("closeJob"), 403),
                (fixture.tokens["rita"], Self.path("lookUp"), 200),
                (fixture.tokens["alice"], Self.path("closeJob"), 200),
                (fixture.tokens["ada"], Self.path("closeJob"), 200),
            ]
            for (token, path, status) in cases {
                let reply = try await fixture.http.send(.POST, path, token: token, json: body)
                #expect(reply.status == status, "\(path)")
                if status == 403 { #expect(reply.errorCode == "forbidden") }
                if status == 404 { #expect(reply.errorCode == "not_found") }
            }
            // Only the three allowed calls reached the backend.
            #expect(backend.calls.count == 3)
        }
    }

    @Test("the backend receives the signed call with the arguments, the caller and the key; its JSON comes back")
    func forwarded() async throws {
        try await Self.withBackend(Self.echo) { fixture, backend in
            try await fixture.server.server.admin.setClaims(user: "alice", project: Fixture.project, ["region": "north"])
            let reply = try await fixture.http.send(
                .POST, Self.path("closeJob"), token: fixture.tokens["alice"],
                json: ["arguments": ["jobId": "j-7"], "idempotencyKey": "k-1", "device": "iPad-7"])
            #expect(reply.status == 200)
            #expect(reply.json == ["result": ["echo": ["jobId": "j-7"], "user": "alice"], "idempotencyKey": "k-1", "replayed": false])
            let call = try #require(backend.calls.first)
            #expect(call.signatureIsValid)
            #expect(call.headers["cairn-action"] == "closeJob")
            #expect(call.headers["cairn-idempotency-key"] == "k-1")
            #expect(call.body["project"] == "field")
            #expect(call.body["action"] == "closeJob")
            #expect(call.idempotencyKey == "k-1")
            #expect(call.caller == ["user": "alice", "role": "writer", "claims": ["region": "north"], "device": "iPad-7"])
            // Without a key the server makes one, and sends it.
            let unkeyed = try await fixture.http.send(.POST, Self.path("closeJob"), token: fixture.tokens["bob"], json: [:])
            let key = try #require(unkeyed.json?["idempotencyKey"]?.stringValue)
            #expect(backend.calls.last?.idempotencyKey == key)
            #expect(backend.calls.last?.arguments == .null)
            #expect(backend.calls.last?.caller["device"] == .null)
        }
    }

    @Test("the same idempotency key answers the stored answer again without calling the backend; another action's key is a conflict")
    func replay() async throws {
        try await Self.withBackend(Self.echo) { fixture, backend in
            let body: JSONValue = ["arguments": ["n": 1], "idempotencyKey": "once"]
            let first = try await fixture.http.send(.POST, Self.path("closeJob"), token: fixture.tokens["alice"], json: body)
            let second = try await fixture.http.send(.POST, Self.path("closeJob"), token: fixture.tokens["alice"], json: body)
            #expect(first.json?["replayed"] == false)
            #expect(second.json?["replayed"] == true)
            #expect(second.json?["result"] == first.json?["result"])
            #expect(backend.calls.count == 1)
            let other = try await fixture.http.send(.POST, Self.path("lookUp"), token: fixture.tokens["alice"], json: body)
            #expect(other.status == 409)
            // Another member's call with alice's key neither replays her answer nor reaches the backend.
            let bobs = try await fixture.http.send(.POST, Self.path("closeJob"), token: fixture.tokens["bob"], json: body)
            #expect(bobs.status == 409 && bobs.json?["error"]?["message"]?.stringValue?.contains("n") == true)
            #expect(bobs.json?["result"] == nil)
            #expect(backend.calls.count == 1)
        }
    }

    @Test("a backend's 5xx or 429 is 502 retryable and not stored; a 3xx is not followed")
    func backendBusy() async throws {
        try await Self.withBackend({ call in
            switch call.arguments["answer"]?.integerValue {
            case 302?: StubHTTPServer.Reply(status: 302, headers: ["Location": "http://127.0.0.1:9/elsewhere"])
            case let status?: .json(["message": "busy"], status: Int(status))
            case nil: .json(["ok": true])
            }
        }) { fixture, backend in
            for status in [500, 503, 429] {
                let key = "busy-\(status)"
                let reply = try await fixture.http.send(
                    .POST, Self.path("closeJob"), token: fixture.tokens["alice"], json: ["arguments": ["answer": .integer(Int64(status))], "idempotencyKey": .string(key)])
                #expect(reply.status == 502 && reply.json?["error"]?["details"]?["retryable"] == true, "\(status)")
                #expect(try await fixture.server.server.storage.actionCall(project: Fixture.project, idempotencyKey: key) == nil)
            }
            let redirected = try await fixture.http.send(
                .POST, Self.path("closeJob"), token: fixture.tokens["alice"], json: ["arguments": ["answer": 302], "idempotencyKey": "moved"])
            #expect(redirected.status == 502 && redirected.json?["error"]?["details"]?["status"] == 302)
            #expect(backend.calls.count == 4)
        }
    }

    @Test("a backend's refusal answers 502 action_failed with its status and body, is stored and replayed; an empty answer is null")
    func refused() async throws {
        try await Self.withBackend({ call in
            call.arguments["empty"] == true ? StubHTTPServer.Reply(status: 204)
                : .json(["error": ["message": "job j-7 is already closed"]], status: 409)
        }) { fixture, backend in
            let body: JSONValue = ["arguments": ["jobId": "j-7"], "idempotencyKey": "refused-1"]
            for replayed in [false, true] {
                let reply = try await fixture.http.send(.POST, Self.path("closeJob"), token: fixture.tokens["alice"], json: body)
                #expect(reply.status == 502)
                #expect(reply.errorCode == "action_failed")
                #expect(reply.json?["error"]?["message"]?.stringValue?.contains("answered 409: job j-7 is already closed") == true)
                #expect(reply.json?["error"]?["details"]?["status"] == 409)
                #expect(reply.json?["error"]?["details"]?["body"] == ["error": ["message": "job j-7 is already closed"]])
                #expect(reply.json?["error"]?["details"]?["retryable"] == nil)
                #expect((reply.json?["error"]?["details"]?["replayed"] == true) == replayed)
            }
            #expect(backend.calls.count == 1)
            let empty = try await fixture.http.send(.POST, Self.path("closeJob"), token: fixture.tokens["alice"], json: ["arguments": ["empty": true]])
            #expect(empty.status == 200)
            #expect(empty.json?["result"] == .null)
        }
    }

    @Test("a backend that cannot be reached, or answers no JSON, is 502 retryable and not stored: the key may call again")
    func unanswered() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let secret = try await fixture.server.server.admin.actionSecret(project: Fixture.project)
            try await withClosedLoopbackPort { port in
                try await fixture.server.server.admin.setSchema(project: Fixture.project, Fixture.schema(actions: [
                    ActionSchema(name: "closeJob", url: "http://127.0.0.1:\(port)/close", timeoutSeconds: 1)]))
                let reply = try await fixture.http.send(
                    .POST, Self.path("closeJob"), token: fixture.tokens["alice"], json: ["idempotencyKey": "down-1"])
                #expect(reply.status == 502)
                #expect(reply.errorCode == "action_failed")
                #expect(reply.json?["error"]?["details"]?["retryable"] == true)
                #expect(reply.json?["error"]?["details"]?["status"] == nil)
                #expect(try await fixture.server.server.storage.actionCall(project: Fixture.project, idempotencyKey: "down-1") == nil)
            }
            try await TestActionBackend.with(secret: secret, { call in
                call.arguments == "html" ? .text("<html>oops</html>") : .json(["ok": true])
            }) { backend in
                try await fixture.server.server.admin.setSchema(project: Fixture.project, Fixture.schema(actions: [
                    ActionSchema(name: "closeJob", url: backend.url)]))
                let html = try await fixture.http.send(
                    .POST, Self.path("closeJob"), token: fixture.tokens["alice"], json: ["arguments": "html", "idempotencyKey": "html-1"])
                #expect(html.status == 502)
                #expect(html.json?["error"]?["details"]?["retryable"] == true)
                // The same key, once the backend answers: called again, answered and stored.
                let again = try await fixture.http.send(.POST, Self.path("closeJob"), token: fixture.tokens["alice"], json: ["idempotencyKey": "down-1"])
                #expect(again.status == 200)
                #expect(again.json?["result"] == ["ok": true])
                #expect(try await fixture.server.server.storage.actionCall(project: Fixture.project, idempotencyKey: "down-1") != nil)
            }
        }
    }

    @Test("a malformed body is 400, a malformed key 422")
    func badBodies() async throws {
        try await Self.withBackend(Self.echo) { fixture, backend in
            let notJSON = try await fixture.http.send(.POST, Self.path("closeJob"), token: fixture.tokens["alice"], body: Data("{nope".utf8))
            #expect(notJSON.status == 400)
            let badKey = try await fixture.http.send(.POST, Self.path("closeJob"), token: fixture.tokens["alice"], json: ["idempotencyKey": "a b"])
            #expect(badKey.status == 422)
            #expect(backend.calls.isEmpty)
        }
    }

    @Test("schemas declare actions: checked names, URLs and timeouts; a schema without actions keeps its version")
    func schemaActions() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let admin = fixture.server.server.admin
            for bad in [
                [ActionSchema(name: "1close", url: "https://erp.example/close")],
                [ActionSchema(name: "close", url: "ftp://erp.example/close")],
                [ActionSchema(name: "close", url: "/close")],
                [ActionSchema(name: "close", url: "https://erp.example/close", timeoutSeconds: 61)],
                [ActionSchema(name: "close", url: "https://erp.example/a"), ActionSchema(name: "close", url: "https://erp.example/b")],
            ] {
                await #expect(throws: ErrorBody.self) { try await admin.setSchema(project: Fixture.project, Fixture.schema(actions: bad)) }
            }
            #expect(SchemaVersioning.stamped(Fixture.schema(actions: [])).version == SchemaVersioning.stamped(Fixture.schema).version)
            let plain = try #require(String(data: try CairnJSON.encode(Fixture.schema), encoding: .utf8))
            #expect(!plain.contains("actions"))
            let stored = try await admin.setSchema(project: Fixture.project, Fixture.schema(actions: [
                ActionSchema(name: "closeJob", url: "https://erp.example/close")]))
            #expect(stored.actions == [ActionSchema(name: "closeJob", url: "https://erp.example/close", timeoutSeconds: 10, role: .writer)])
            let served = try await fixture.http.send(.GET, "/v1/projects/field/schema", token: fixture.tokens["alice"])
            #expect(served.json?["actions"] == [["name": "closeJob", "url": "https://erp.example/close", "timeoutSeconds": 10, "role": "writer"]])
        }
    }
}
