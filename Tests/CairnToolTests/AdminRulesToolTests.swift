import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// `cairn admin set-claims`, `claims` and `explain`, and schemas with data rules, on a data directory and on PostgreSQL.
@Suite("cairn admin: claims, rules and explain", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"))
struct AdminRulesToolTests {
    @Test("set-schema checks rules, set-claims and claims round-trip, explain says which condition decides, as text and JSON")
    func claimsAndExplain() async throws {
        let data = Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        for d in try AdminListsToolTests.backends(data) {
            func admin(_ arguments: [String]) async throws -> Tool.Output { try await Tool.run(["admin"] + d + arguments) }
            #expect(try await admin(["add-project", "field"]).status == 0)
            #expect(try await admin(["add-user", "bob", "--password", "long enough pass"]).status == 0)
            #expect(try await admin(["grant", "bob", "--project", "field", "--role", "writer"]).status == 0)
            let schema = data.appendingPathComponent("schema-\(d[0]).json")
            try CairnJSON.encode(RulesFixture.schema()).write(to: schema)
            #expect(try await admin(["set-schema", "--project", "field", schema.path]).status == 0)
            let bad = data.appendingPathComponent("bad-\(d[0]).json")
            try CairnJSON.encode(RulesFixture.schema(read: .condition("priority", .eq, RuleParameter.userName.value))).write(to: bad)
            let refused = try await admin(["set-schema", "--project", "field", bad.path])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("jobs.rules.read"))

            #expect(try await admin(["set-claims", "bob", "--project", "field", #"{"regions": ["north"]}"#]).status == 0)
            #expect(try await admin(["claims", "bob", "--project", "field"]).stdout == #"{"regions":["north"]}"# + "\n")
            let notJSON = try await admin(["set-claims", "bob", "--project", "field", "[1]"])
            #expect(notJSON.status != 0)
            #expect(notJSON.stderr.contains("not a JSON object"))
            let stranger = try await admin(["set-claims", "nobody", "--project", "field", "{}"])
            #expect(stranger.status != 0)
            #expect(stranger.stderr.contains("not a member"))

            let text = try await admin(["explain", "--project", "field", "--user", "bob", "--collection", "jobs", "--id", "j-4"])
            #expect(text.status == 0)
            #expect(text.stdout.contains("record jobs j-4: no live record"))
            let json = try await admin(["explain", "--project", "field", "--user", "bob", "--collection", "jobs", "--id", "j-4", "--json",
                                  "--claims", #"{"regions": ["south"]}"#])
            let explanation = try CairnJSON.decode(RuleExplanation.self, from: Array(json.stdout.utf8))
            #expect(explanation.claims == ["regions": ["south"]])
            #expect(explanation.role == .writer)
            #expect(!explanation.read.allowed)
            let unknown = try await admin(["explain", "--project", "field", "--user", "bob", "--collection", "nope", "--id", "j-4"])
            #expect(unknown.status != 0)
            #expect(unknown.stderr.contains("collection \"nope\""))
        }
    }
}
