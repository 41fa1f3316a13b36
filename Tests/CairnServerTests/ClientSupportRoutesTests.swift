import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// Removing a client and its diagnostics reports over HTTP: who may call each route, and what each changes.
@Suite("Client routes: removal and diagnostics")
struct ClientSupportRoutesTests {
    /// Registers a client as `user` and returns its id.
    static func register(_ fixture: Fixture, _ user: String, device: String = "iPad") async throws -> String {
        let reply = try await fixture.http.send(
            .POST, "/v1/projects/field/clients", token: fixture.tokens[user], value: ClientRegistrationRequest(device: device, app: "Field"))
        return try reply.decode(ClientRegistration.self).clientId
    }

    /// The ids of the project's clients, as an admin lists them.
    static func listed(_ fixture: Fixture) async throws -> [String] {
        try await fixture.http.send(.GET, "/v1/projects/field/clients", token: fixture.tokens["ada"]).decode(AdminPage<ClientSummary>.self).items
            .map(\.clientId)
    }

    @Test("a client is removed by its own user or an admin: no token 401, non-member 404, another member 403; then it is not listed")
    func removal() async throws {
        let (fixture, opal) = try await AdministrationRoutesTests.start()
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http
            let rita = try await Self.register(fixture, "rita")
            let alice = try await Self.register(fixture, "alice")
            let bob = try await Self.register(fixture, "bob")
            let path = "/v1/projects/field/clients/\(rita)"
            for (token, status) in [(nil, 401), (fixture.tokens["olga"], 404), (fixture.tokens["alice"], 403), (fixture.tokens["bob"], 403)] {
                let reply = try await http.send(.DELETE, path, token: token)
                #expect(reply.status == status, "\(String(decoding: reply.body, as: UTF8.self))")
            }
            #expect(try await Self.listed(fixture).sorted() == [alice, bob, rita].sorted())
            // rita (a reader) removes her own client; once removed it is not found.
            #expect(try await http.send(.DELETE, path, token: fixture.tokens["rita"]).status == 204)
            #expect(try await Self.listed(fixture).sorted() == [alice, bob].sorted())
            let again = try await http.send(.DELETE, path, token: fixture.tokens["rita"])
            #expect(again.status == 404 && again.errorCode == "not_found")
            // The project's admin and a server operator remove anyone's client.
            #expect(try await http.send(.DELETE, "/v1/projects/field/clients/\(alice)", token: fixture.tokens["ada"]).status == 204)
            #expect(try await http.send(.DELETE, "/v1/projects/field/clients/\(bob)", token: opal).status == 204)
            #expect(try await Self.listed(fixture).isEmpty)
            for unknown in ["c-nope", "not%20an%20id"] {
                #expect(try await http.send(.DELETE, "/v1/projects/field/clients/\(unknown)", token: fixture.tokens["ada"]).status == 404)
            }
            // A client of another project is not this project's.
            let other = try await http.send(.POST, "/v1/projects/other/clients", token: fixture.tokens["olga"], json: [:])
            let otherID = try other.decode(ClientRegistration.self).clientId
            #expect(try await http.send(.DELETE, "/v1/projects/field/clients/\(otherID)", token: fixture.tokens["ada"]).status == 404)
        }
    }

    @Test("a diagnostics report is uploaded by the client's user or an admin and read by admins; each upload replaces the last")
    func diagnostics() async throws {
        let (fixture, opal) = try await AdministrationRoutesTests.start()
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http
            let rita = try await Self.register(fixture, "rita", device: "Pixel")
            let path = "/v1/projects/field/clients/\(rita)/diagnostics"
            let report: JSONValue = ["verdict": "waiting", "queueDepth": 2, "collections": [["name": "notes", "rows": 3]]]
            #expect(try await http.send(.GET, path, token: fixture.tokens["ada"]).status == 404, "none uploaded yet")
            for (token, status) in [(nil, 401), (fixture.tokens["olga"], 404), (fixture.tokens["alice"], 403)] {
                #expect(try await http.send(.PUT, path, token: token, json: report).status == status)
            }
            let uploaded = try await http.send(.PUT, path, token: fixture.tokens["rita"], json: report)
            #expect(uploaded.status == 200)
            let receipt = try uploaded.decode(DiagnosticsReceipt.self)
            #expect(receipt.clientId == rita && receipt.bytes == report.jsonText().utf8.count)

            // Reading is for admins: rita (reader) and alice (writer) are refused, a non-member is not told it exists.
            for (token, status) in [(nil, 401), (fixture.tokens["olga"], 404), (fixture.tokens["rita"], 403), (fixture.tokens["alice"], 403)] {
                #expect(try await http.send(.GET, path, token: token).status == status)
            }
            for token in [fixture.tokens["ada"]!, opal] {
                let read = try await http.send(.GET, path, token: token)
                #expect(read.status == 200)
                let stored = try read.decode(ClientDiagnostics.self)
                #expect(stored.report == report && stored.client.clientId == rita && stored.client.user == "rita" && stored.client.device == "Pixel")
                #expect(abs(stored.uploadedAt.timeIntervalSince(receipt.uploadedAt)) < 0.001, "dates go over the wire in milliseconds")
            }
            let newer: JSONValue = ["verdict": "up-to-date", "queueDepth": 0]
            #expect(try await http.send(.PUT, path, token: fixture.tokens["ada"], json: newer).status == 200)
            #expect(try await http.send(.GET, path, token: fixture.tokens["ada"]).decode(ClientDiagnostics.self).report == newer)

            // Bad bodies: not JSON 400, not an object 422, too large 413; none replaces the stored report.
            #expect(try await http.send(.PUT, path, token: fixture.tokens["rita"], body: Data("{not json".utf8)).status == 400)
            let array = try await http.send(.PUT, path, token: fixture.tokens["rita"], json: [1, 2])
            #expect(array.status == 422 && array.errorCode == "validation_failed")
            let large = try await http.send(.PUT, path, token: fixture.tokens["rita"], json: ["notes": .string(String(repeating: "x", count: 300 * 1024))])
            #expect(large.status == 413 && large.errorCode == "payload_too_large")
            #expect(try await http.send(.GET, path, token: fixture.tokens["ada"]).decode(ClientDiagnostics.self).report == newer)
            #expect(try await http.send(.PUT, "/v1/projects/field/clients/c-nope/diagnostics", token: fixture.tokens["ada"], json: report).status == 404)

            // Removing the client removes its report.
            #expect(try await http.send(.DELETE, "/v1/projects/field/clients/\(rita)", token: fixture.tokens["rita"]).status == 204)
            #expect(try await http.send(.GET, path, token: fixture.tokens["ada"]).status == 404)
        }
    }

    @Test("an operation's history: its tag and answer for admins only; a replay keeps the first tag; a bad tag is refused")
    func operationHistory() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let http = fixture.http
            let opId = newOpID()
            let tagged = SyncOperation(opId: opId, collection: "notes", id: "n-1", op: .create, data: ["title": "a"], tag: "inspection/4.2")
            #expect(try await fixture.push("alice", [tagged]).first?.status == .applied)
            let path = "/v1/projects/field/operations/\(opId)"
            for (token, status) in [(nil, 401), (fixture.tokens["olga"], 404), (fixture.tokens["rita"], 403), (fixture.tokens["alice"], 403)] {
                #expect(try await http.send(.GET, path, token: token).status == status, "\(status)")
            }
            let entry = try await http.send(.GET, path, token: fixture.tokens["ada"]).decode(OperationHistoryEntry.self)
            #expect(entry.opId == opId && entry.tag == "inspection/4.2")
            #expect(entry.result["status"] == "applied" && entry.result["record"]?["id"] == "n-1")
            // The tag is no part of the operation's identity: a replay under another tag is the same operation.
            var replay = tagged
            replay.tag = "other"
            #expect(try await fixture.push("alice", [replay]).first?.status == .applied)
            #expect(try await http.send(.GET, path, token: fixture.tokens["ada"]).decode(OperationHistoryEntry.self).tag == "inspection/4.2")
            // Untagged operations answer without a tag; unknown opIds are 404.
            let plain = newOpID()
            _ = try await fixture.push("alice", [SyncOperation(opId: plain, collection: "notes", id: "n-2", op: .create, data: ["title": "b"])])
            #expect(try await http.send(.GET, "/v1/projects/field/operations/\(plain)", token: fixture.tokens["ada"]).decode(OperationHistoryEntry.self).tag == nil)
            #expect(try await http.send(.GET, "/v1/projects/field/operations/\(newOpID())", token: fixture.tokens["ada"]).status == 404)
            // A tag too long, or holding a control character (U+0000 among them), is refused in its result.
            for tag in [String(repeating: "t", count: 201), "a\u{0}b", "line\nbreak"] {
                let refused = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "notes", id: "n-3", op: .create, data: ["title": "c"], tag: tag)])
                #expect(refused.first?.status == .rejected && refused.first?.error?.code == .validationFailed && refused.first?.error?.details?["field"] == "tag")
            }
        }
    }
}
