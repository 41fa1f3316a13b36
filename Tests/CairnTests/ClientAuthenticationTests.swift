import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Synchronization
import Testing

@Suite("Signing in from the SDK")
struct ClientAuthenticationTests {
    @Test("an access token that expired is renewed with the refresh token, and sync goes on")
    func passwordTokensRefresh() async throws {
        let clock = ManualWallClock(Date())
        let fixture = try await Fixture.start(clock: clock) { $0.accessTokenLifetime = 60 }
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.create("notes", id: "n1", data: ["title": "before"])
            try await alice.sync()
            clock.advance(by: 3600)
            try alice.create("notes", id: "n2", data: ["title": "after"])
            #expect(try await alice.sync().pushed == 1)
            #expect(try await alice.verify("notes").matches)
        }
    }

    @Test("a token closure supplies the app's own tokens, and is asked again when the server refuses one")
    func tokenProvider() async throws {
        let clock = ManualWallClock(Date())
        let fixture = try await Fixture.start(clock: clock) { $0.accessTokenLifetime = 60 }
        try await withCleanup({ await fixture.stop() }) {
            let calls = Mutex(0)
            let http = fixture.http
            let alice = try await fixture.client("alice") {
                $0.credentials = .token(user: "alice") {
                    calls.withLock { $0 += 1 }
                    return try await http.login("alice").accessToken
                }
            }
            try alice.create("notes", id: "n1", data: ["title": "before"])
            try await alice.sync()
            let before = calls.withLock { $0 }
            #expect(before >= 1)
            clock.advance(by: 3600)
            try alice.create("notes", id: "n2", data: ["title": "after"])
            #expect(try await alice.sync().pushed == 1)
            #expect(calls.withLock { $0 } > before)
        }
    }

    @Test("an identity provider's JWT from the token closure signs in; once it expires the closure is asked again and nothing queued is lost")
    func identityProviderToken() async throws {
        let clock = ManualWallClock(Date())
        let provider = try TestIdentityProvider()
        let jwks = TestScratch.url("jwks", suffix: ".json")
        try provider.jwks().write(to: jwks)
        let fixture = try await Fixture.start(clock: clock) {
            $0.identityProvider = IdentityProviderConfiguration(
                jwks: jwks.path, issuer: TestIdentityProvider.issuer, audience: TestIdentityProvider.audience)
        }
        try await withCleanup({ await fixture.stop() }) {
            let asked = Mutex(0)
            // The app's sign-in: here a token that lives 5 minutes, naming zoe a writer of the project.
            let zoe = try await fixture.client("zoe") {
                $0.credentials = .token(user: "zoe") {
                    asked.withLock { $0 += 1 }
                    return try TestIdentityProvider.token(
                        TestIdentityProvider.claims("zoe", now: clock.now(), ["cairn": ["projects": .object([Fixture.project: "writer"])]]),
                        key: provider.ec)
                }
            }
            try zoe.create("notes", id: "n1", data: ["title": "before"])
            try await zoe.sync()
            let before = asked.withLock { $0 }
            #expect(before >= 1)
            // An hour later the token has expired; changes made meanwhile wait in the queue.
            clock.advance(by: 3600)
            try zoe.create("notes", id: "n2", data: ["title": "after"])
            try zoe.create("notes", id: "n3", data: ["title": "after too"])
            #expect(try await zoe.sync().pushed == 2)
            #expect(asked.withLock { $0 } > before)
            #expect(try zoe.pendingOperations().isEmpty)
            #expect(try zoe.failedOperations().isEmpty)
            let alice = try await fixture.http.login("alice").accessToken
            let stored = try await fixture.http.send(.GET, "/v1/projects/field/collections/notes/changes", token: alice).decode(ChangesPage.self).changes
            #expect(Set(stored.map(\.id)) == ["n1", "n2", "n3"])
            #expect(stored.allSatisfy { $0.record?.updatedBy == "zoe" })
        }
    }
}
