import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Errors keep what went wrong; secrets never print")
struct ErrorReportingTests {
    @Test("printing credentials, configurations and tokens shows no secret, however they are printed")
    func redaction() {
        let secret = "s3cret-Pa55word"
        let configuration = CairnConfiguration(
            serverURL: URL(string: "https://sync.example.com")!, project: "field", device: "tablet",
            credentials: .password(user: "alice", password: secret), store: .inMemory)
        let tokens = TokenResponse(accessToken: "access-\(secret)", refreshToken: "refresh-\(secret)", expiresIn: 900,
                                   user: UserInfo(name: "alice", projects: []))
        let login = LoginRequest(username: "alice", password: secret)
        let refresh = RefreshRequest(refreshToken: secret)
        let values: [Any] = [configuration, configuration.credentials, tokens, login, refresh, [configuration.credentials]]
        for value in values {
            var dumped = ""
            dump(value, to: &dumped)
            for text in [String(describing: value), String(reflecting: value), "\(value)", dumped] {
                #expect(!text.contains(secret), "printed a secret: \(text)")
            }
        }
        #expect(String(describing: configuration).contains("alice"))
        #expect(String(describing: configuration.credentials).contains("<redacted>"))
    }

    @Test("a server error keeps its code, message, status and details; its description prints no data")
    func serverDetails() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice") { configuration in
                configuration.downloadFilters["notes"] = .condition("nope", .eq, "secret-value")
            }
            let error = await #expect(throws: CairnError.self) { try await alice.pull(["notes"]) }
            #expect(error?.code == .validationFailed)
            #expect(error?.httpStatus == 422)
            #expect(error?.details?["field"] == "nope", "\(String(describing: error?.details))")
            #expect(error.map { !$0.description.contains("secret-value") } ?? false)
        }
    }

    @Test("a local filter error keeps its wire code and details instead of becoming store_failed")
    func localFilterError() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let error = #expect(throws: CairnError.self) { try alice.records(Query("notes").filter(.condition("nope", .eq, 1))) }
            #expect(error?.code == .validationFailed)
            #expect(error?.details?["field"] == "nope")
        }
    }

    @Test("a conflict resolver that throws is reported as resolver_failed with its cause, and the change stays queued")
    func resolverFailure() async throws {
        struct AppFailure: Error {}
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let bob = try await fixture.client("bob")
            let alice = try await fixture.client("alice") { configuration in
                configuration.collectionResolvers["tasks"] = .custom { _ in throw AppFailure() }
            }
            try alice.save("tasks", id: "t1", data: ["title": "a"])
            try await alice.sync()
            try await bob.sync()
            try bob.patch("tasks", id: "t1", ["title": "bob"])
            try await bob.sync()
            try alice.patch("tasks", id: "t1", ["title": "alice"])
            let error = await #expect(throws: CairnError.self) { try await alice.sync() }
            #expect(error?.code == .resolverFailed)
            #expect(error?.cause is AppFailure)
            #expect(error?.details?["id"] == "t1")
            #expect(try alice.pendingOperations().map(\.recordID) == ["t1"])
            #expect(await alice.status().lastError?.code == .resolverFailed)
        }
    }
}
