import CairnProtocol
@testable import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("The data rules article's example")
struct DataRulesArticleTests {
    @Test("the worked example of DataRules.md runs, and explain says what the article prints")
    func workedExample() async throws {
        let directory = TestScratch.url("rules-article")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let storage = try ServerBackend.sqlite(dataDirectory: directory).openNow().storage
        try await ServerAdmin(storage: storage).addProject("field")
        try await ServerAdmin(storage: storage).addUser("bob", password: "a long password")
        try await ServerAdmin(storage: storage).grant(user: "bob", project: "field", role: .writer)

        // As in the article, with this test's directory.
        let jobs = CollectionSchema(
            name: "jobs",
            fields: [FieldSchema(name: "title", type: .string), FieldSchema(name: "assignee", type: .string),
                     FieldSchema(name: "region", type: .string)],
            rules: DataRules(
                read: .or([.condition("assignee", .eq, RuleParameter.userName.value),
                           .condition("region", .in, RuleParameter.claim("regions").value)]),
                write: .condition("assignee", .eq, RuleParameter.userName.value)))
        let admin = ServerAdmin(storage: try ServerBackend.sqlite(dataDirectory: directory).openNow().storage)
        try await admin.setSchema(project: "field", Schema(collections: [jobs]))
        try await admin.setClaims(user: "bob", project: "field", ["regions": ["north"]])
        let schema = try #require(try await storage.schema(project: "field"))
        let job = SyncOperation(opId: newOpID(), collection: "jobs", id: "j-4", op: .create, data: ["assignee": "carl", "region": "north"])
        _ = try await BatchService(storage: storage).apply(BatchRequest(operations: [job]), project: "field", schema: schema, user: "ada", now: Date())
        let why = try await admin.explain(project: "field", user: "bob", collection: "jobs", id: "j-4")
        #expect(why.read.reason == #"the read rule matches: region in claims.regions (["north"]) holds"#)
        #expect(why.write.reason == #"the write rule does not match: assignee eq user.name ("bob") does not hold"#)
    }
}
