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
        defer { Task { await fixture.stop() } }
        let alice = try await fixture.client("alice")
        try alice.create("notes", id: "n1", data: ["title": "before"])
        try await alice.sync()
        clock.advance(by: 3600)
        try alice.create("notes", id: "n2", data: ["title": "after"])
        #expect(try await alice.sync().pushed == 1)
        #expect(try await alice.verify("notes").matches)
    }

    @Test("a token closure supplies the app's own tokens, and is asked again when the server refuses one")
    func tokenProvider() async throws {
        let clock = ManualWallClock(Date())
        let fixture = try await Fixture.start(clock: clock) { $0.accessTokenLifetime = 60 }
        defer { Task { await fixture.stop() } }
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
