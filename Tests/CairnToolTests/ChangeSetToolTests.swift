import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("cairn put --atomic", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"))
struct ChangeSetToolTests {
    @Test("several records put with --atomic reach the server all together, or fail as one entry when one is refused")
    func atomicPut() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let store = Fixture.temporaryStorePath()
            let password = ["CAIRN_PASSWORD": TestServer.password]
            let first = try await Tool.run(
                ["sync", "--store", store, "--server", fixture.server.baseURL.absoluteString, "--project", Fixture.project, "--user", "alice"],
                environment: password)
            #expect(first.status == 0, "\(first.stderr)")

            let put = try await Tool.run(["put", "--store", store, "--atomic", "notes", "a1", #"{"title": "one"}"#, "a2", #"{"title": "two"}"#])
            #expect(put.status == 0, "\(put.stderr)")
            #expect(put.stdout.contains("saved 2 records of notes locally as one change set"), "\(put.stdout)")
            let odd = try await Tool.run(["put", "--store", store, "--atomic", "notes", "a3", #"{"title": "x"}"#, "a4"])
            #expect(odd.status != 0 && odd.stderr.contains("ID JSON pairs"), "\(odd.stderr)")
            #expect(try await Tool.run(["sync", "--store", store], environment: password).status == 0)
            let titles = try await fixture.pullAll("ada", "notes").changes.compactMap { $0.data?["title"]?.stringValue }.sorted()
            #expect(titles == ["one", "two"])

            // The server now wants `level` as an integer; the store has not learned it yet, so the refusal comes from the server.
            var grown = Fixture.schema
            grown.collections[0].fields.append(FieldSchema(name: "level", type: .integer))
            try await fixture.server.server.admin.setSchema(project: Fixture.project, grown)
            let refused = try await Tool.run(
                ["put", "--store", store, "--atomic", "notes", "a1", #"{"title": "one, again"}"#, "b1", #"{"title": "b", "level": "high"}"#])
            #expect(refused.status == 0, "\(refused.stderr)")
            _ = try await Tool.run(["sync", "--store", store], environment: password)
            let status = try await Tool.run(["status", "--store", store])
            #expect(status.stdout.contains("1 upload was refused by the server"), "\(status.stdout)")
            #expect(try await fixture.pullAll("ada", "notes").changes.compactMap { $0.data?["title"]?.stringValue }.sorted() == ["one", "two"])
        }
    }
}
