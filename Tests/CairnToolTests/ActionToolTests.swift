import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("cairn call and cairn action-results", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"))
struct ActionToolTests {
    @Test("cairn call prints the backend's answer; --queue queues it behind the store's writes, cairn queue lists it, sync sends it once, action-results shows it")
    func callAndQueue() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await fixture.withActionBackend({ call in
                call.arguments["fail"] == true ? .json(["message": "job is closed"], status: 409) : .json(["closed": call.arguments["jobId"] ?? .null])
            }) { backend in
                let store = Fixture.temporaryStorePath()
                let password = ["CAIRN_PASSWORD": TestServer.password]
                let first = try await Tool.run(
                    ["sync", "--store", store, "--server", fixture.server.baseURL.absoluteString, "--project", Fixture.project, "--user", "alice"],
                    environment: password)
                #expect(first.status == 0, "\(first.stderr)")

                let online = try await Tool.run(["call", "--store", store, "closeJob", "--arguments", #"{"jobId": "j-1"}"#], environment: password)
                #expect(online.status == 0, "\(online.stderr)")
                #expect(online.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"closed":"j-1"}"#)
                let refused = try await Tool.run(["call", "--store", store, "closeJob", "--arguments", #"{"fail": true}"#], environment: password)
                #expect(refused.status != 0)
                #expect(refused.stderr.contains("answered 409: job is closed"), "\(refused.stderr)")

                #expect(try await Tool.run(["put", "--store", store, "notes", "n-1", #"{"title": "one"}"#]).status == 0)
                let queued = try await Tool.run(["call", "--store", store, "closeJob", "--arguments", #"{"jobId": "j-2"}"#, "--queue"])
                #expect(queued.status == 0, "\(queued.stderr)")
                let key = try #require(queued.stdout.split(separator: "\n").last.map(String.init))
                let list = try JSONValue(parsing: Array(try await Tool.run(["queue", "--store", store]).stdout.utf8))
                #expect(list["result"]?["pending"]?.arrayValue?.map { $0["kind"] ?? .null } == ["create", "action"])
                #expect(list["result"]?["pending"]?.arrayValue?.last?["key"]?.stringValue == key)

                #expect(try await Tool.run(["sync", "--store", store], environment: password).status == 0)
                #expect(try await Tool.run(["sync", "--store", store], environment: password).status == 0)
                #expect(backend.calls.filter { $0.idempotencyKey == key }.count == 1)
                let results = try await Tool.run(["action-results", "--store", store, "--json"])
                let parsed = try JSONValue(parsing: Array(results.stdout.utf8))
                #expect(parsed["result"]?["actionResults"]?.arrayValue?.map { $0["key"] ?? .null } == [.string(key)])
                #expect(parsed["result"]?["actionResults"]?.arrayValue?.first?["result"] == ["closed": "j-2"])
                let lines = try await Tool.run(["action-results", "--store", store])
                #expect(lines.stdout.contains("\(key) closeJob ok"), "\(lines.stdout)")
            }
        }
    }
}
