import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Bad server answers")
struct BadServerTests {
    static let answers: [(String, Int, String, ErrorCode)] = [
        ("/batch", 200, "{not json", .badResponse),
        ("/batch", 200, #"{"results": 5}"#, .badResponse),
        ("/batch", 200, #"{"results": []}"#, .badResponse),
        ("/batch", 500, "<html>oops</html>", .unavailable),
        ("/batch", 503, #"{"error": {"code": "unavailable", "message": "maintenance"}}"#, .unavailable),
        ("/changes", 200, #"{"changes": [{"id": 5}], "cursor": "x", "hasMore": false}"#, .badResponse),
        ("/changes", 200, #"{"changes": [], "hasMore": false}"#, .badResponse),
        ("/changes", 200, #"{"changes": [{"id": "a", "version": 1}], "cursor": "x", "hasMore": false}"#, .badResponse),
        ("/changes", 200, "", .badResponse),
        ("/schema", 200, #"{"collections": "nope"}"#, .badResponse),
    ]

    @Test("malformed JSON, wrong shapes and 5xx give typed errors and leave the queue and the data intact", arguments: answers)
    func badAnswer(path: String, status: Int, body: String, code: ErrorCode) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network)
            try alice.create("notes", id: "synced", data: ["title": "on the server"])
            try await alice.sync()
            try alice.create("notes", id: "n1", data: ["title": "pending"])
            try alice.patch("notes", id: "synced", ["done": true])
            let queued = try alice.pendingOperations().map(\.opId)
            let before = try alice.records(Query("notes"))
            let cursor = try alice.rows("SELECT cursor FROM cairn_collections WHERE name = 'notes'")

            network.intercept { request in
                guard request.url.path.hasSuffix(path) || (path == "/changes" && request.url.path.contains("/changes")) else { return nil }
                return TransportResponse(status: status, headers: [], body: Data(body.utf8))
            }
            do {
                try await alice.sync()
                Issue.record("expected \(code)")
            } catch let error as CairnError {
                #expect(error.code == code)
                #expect(!error.description.contains("pending"))
            }
            if path == "/changes" {
                // The upload went through before the bad page: the data is the same, the cursor did not move.
                #expect(try alice.records(Query("notes")).map(\.data) == before.map(\.data))
                #expect(!alice.hasPendingUpload)
            } else {
                #expect(try alice.pendingOperations().map(\.opId) == queued)
                #expect(try alice.records(Query("notes")) == before)
            }
            #expect(try alice.rows("SELECT cursor FROM cairn_collections WHERE name = 'notes'") == cursor)

            // Once the server behaves, the same operations go up, once.
            network.intercept(nil)
            try await alice.sync()
            #expect(!alice.hasPendingUpload)
            #expect(try await alice.verify("notes").matches)
            #expect(try alice.record("notes", id: "synced")?.data == ["title": "on the server", "done": true])
        }
    }
}
