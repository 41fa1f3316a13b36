import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Accounts, tokens and roles")
struct AuthTests {
    let schemaPath = "/v1/projects/field/schema"

    @Test("login answers tokens and the user's projects")
    func login() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let tokens = try await fixture.http.login("alice")
            #expect(tokens.expiresIn == 900)
            #expect(tokens.user == UserInfo(name: "alice", projects: [ProjectMembership(name: "field", role: .writer)]))
            #expect(tokens.accessToken != tokens.refreshToken)
            let wrong = try await fixture.http.send(.POST, "/v1/auth/login", json: ["username": "alice", "password": "nope-nope"])
            #expect(wrong.status == 401)
            #expect(wrong.errorCode == "invalid_credentials")
            let unknown = try await fixture.http.send(.POST, "/v1/auth/login", json: ["username": "nobody", "password": "nope-nope"])
            #expect(unknown.status == 401)
            #expect(unknown.errorCode == "invalid_credentials")
        }
    }

    @Test("the authorization matrix: no token, tampered, expired, revoked, non-member, reader pushing")
    func matrix() async throws {
        let clock = ManualWallClock()
        let fixture = try await Fixture.start(clock: clock)
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http

            let none = try await http.send(.GET, schemaPath)
            #expect(none.status == 401)
            #expect(none.errorCode == "unauthorized")
            #expect(none.header("WWW-Authenticate") == "Bearer")

            var tampered = fixture.tokens["alice"]!
            let last = tampered.removeLast()
            tampered.append(last == "A" ? "B" : "A")
            #expect(try await http.send(.GET, schemaPath, token: tampered).errorCode == "unauthorized")
            #expect(try await http.send(.GET, schemaPath, headers: ["Authorization": "Basic abc"]).status == 401)

            #expect(try await http.send(.GET, schemaPath, token: fixture.tokens["olga"]).status == 404)
            #expect(try await http.send(.GET, "/v1/projects/nosuch/schema", token: fixture.tokens["alice"]).status == 404)
            #expect(try await http.send(.GET, "/v1/projects/Bad-Name/schema", token: fixture.tokens["alice"]).status == 404)

            let reader = try await http.send(
                .POST, "/v1/projects/field/batch", token: fixture.tokens["rita"],
                value: BatchRequest(operations: [SyncOperation(opId: "o1", collection: "notes", id: "n1", op: .create, data: ["title": "x"])]))
            #expect(reader.status == 403)
            #expect(reader.errorCode == "forbidden")
            #expect(try await fixture.pull("rita", "notes").status == 200)
            let writerSchema = try await http.send(.PUT, schemaPath, token: fixture.tokens["alice"], value: Fixture.schema)
            #expect(writerSchema.status == 403)

            clock.advance(by: 901)
            let expired = try await http.send(.GET, schemaPath, token: fixture.tokens["alice"])
            #expect(expired.status == 401)
            #expect(expired.errorCode == "unauthorized")
            // Nothing was stored by the refused push.
            let fresh = try await http.login("alice")
            let pulled = try await fixture.http.send(.GET, "/v1/projects/field/collections/notes/changes", token: fresh.accessToken)
                .decode(ChangesPage.self)
            #expect(pulled.changes.isEmpty)
        }
    }

    @Test("every route the OpenAPI document does not declare public refuses a request without a valid token")
    func everyDeclaredRouteNeedsAToken() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let file = try await fixture.newFile(size: 3)
            let document = try #require(try await fixture.http.send(.GET, "/v1/openapi.json").json)
            var refused = 0
            for (template, item) in try #require(document["paths"]?.objectValue) {
                let path = template.replacingOccurrences(of: "{project}", with: Fixture.project)
                    .replacingOccurrences(of: "{collection}", with: "notes").replacingOccurrences(of: "{id}", with: file.id)
                    .replacingOccurrences(of: "{user}", with: "rita")
                for (verb, operation) in item.objectValue ?? [:] {
                    // Operations with `security: []` are public (health, login, public files...); the rest need a token.
                    guard ["get", "put", "post", "patch", "delete", "head"].contains(verb), operation["security"]?.arrayValue?.isEmpty != true
                    else { continue }
                    for token in [nil, "cat_forged", fixture.tokens["alice"]! + "x"] {
                        let reply = try await fixture.http.send(.init(rawValue: verb.uppercased()), path, token: token)
                        #expect(reply.status == 401, "\(verb) \(template)")
                        #expect(reply.header("WWW-Authenticate") == "Bearer", "\(verb) \(template)")
                        if verb != "head" { #expect(reply.errorCode == "unauthorized", "\(verb) \(template)") }
                    }
                    refused += 1
                }
            }
            // logout and the sixteen project routes, at least.
            #expect(refused >= 17)
        }
    }

    @Test("refresh tokens rotate, and reusing one revokes the family")
    func refreshRotation() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http
            let first = try await http.login("alice")
            let refreshed = try await http.send(.POST, "/v1/auth/refresh", json: ["refreshToken": .string(first.refreshToken)])
            #expect(refreshed.status == 200)
            let second = try refreshed.decode(TokenResponse.self)
            #expect(second.refreshToken != first.refreshToken)
            #expect(try await http.send(.GET, schemaPath, token: second.accessToken).status == 200)
            // The first access token is still valid until it expires or the family is revoked.
            #expect(try await http.send(.GET, schemaPath, token: first.accessToken).status == 200)

            let reuse = try await http.send(.POST, "/v1/auth/refresh", json: ["refreshToken": .string(first.refreshToken)])
            #expect(reuse.status == 401)
            // Theft detection: the whole family is dead, including the newest pair.
            #expect(try await http.send(.GET, schemaPath, token: second.accessToken).status == 401)
            #expect(try await http.send(.POST, "/v1/auth/refresh", json: ["refreshToken": .string(second.refreshToken)]).status == 401)
            #expect(try await http.send(.POST, "/v1/auth/refresh", json: ["refreshToken": "crt_forged"]).status == 401)
            // Other sign-ins are untouched.
            #expect(try await http.send(.GET, schemaPath, token: fixture.tokens["alice"]).status == 200)
        }
    }

    @Test("logout revokes the presented access token and its refresh token")
    func logout() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http
            let session = try await http.login("bob")
            #expect(try await http.send(.POST, "/v1/auth/logout").status == 401)
            #expect(try await http.send(.POST, "/v1/auth/logout", token: session.accessToken).status == 204)
            #expect(try await http.send(.GET, schemaPath, token: session.accessToken).status == 401)
            #expect(try await http.send(.POST, "/v1/auth/refresh", json: ["refreshToken": .string(session.refreshToken)]).status == 401)
            #expect(try await http.send(.GET, schemaPath, token: fixture.tokens["bob"]).status == 200)
        }
    }

    @Test("repeated wrong passwords for one user are refused with 429 until the window passes")
    func throttling() async throws {
        let clock = ManualWallClock()
        let fixture = try await Fixture.start(clock: clock)
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http
            for _ in 0..<5 {
                #expect(try await http.send(.POST, "/v1/auth/login", json: ["username": "bob", "password": "guess-guess"]).status == 401)
            }
            let limited = try await http.send(.POST, "/v1/auth/login", json: ["username": "bob", "password": .string(TestServer.password)])
            #expect(limited.status == 429)
            #expect(limited.errorCode == "rate_limited")
            #expect(limited.header("Retry-After") != nil)
            // Every test caller is 127.0.0.1: the lock holds for this user from this address (other addresses: LoginThrottleTests).
            #expect(limited.json?["error"]?["message"]?.stringValue?.contains("from here") == true)
            // Another user is not affected.
            #expect(try await http.send(.POST, "/v1/auth/login", json: ["username": "alice", "password": .string(TestServer.password)]).status == 200)
            clock.advance(by: 301)
            #expect(try await http.send(.POST, "/v1/auth/login", json: ["username": "bob", "password": .string(TestServer.password)]).status == 200)
        }
    }
}
