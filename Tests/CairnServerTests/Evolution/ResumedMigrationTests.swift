import CairnProtocol
import CairnTesting
import Foundation
import Testing

@testable import CairnServer

@Suite("Schema evolution: a migration cut short")
struct ResumedMigrationTests {
    @Test("a migration left unfinished is run to the end by the server, and reads see the new shape before it is")
    func resumes() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let admin = fixture.server.server.admin
            try await admin.setSchema(project: "field", SchemaClassificationTests.base)
            _ = try await fixture.push("alice", (1...30).map { SchemaMigrationTests.create("j\($0)", ["title": "job", "score": .integer(Int64($0))]) })
            var renamed = SchemaClassificationTests.base
            renamed.collections[3].fields[1].name = "rating"
            renamed.migrations = [SchemaMigration(collection: "jobs", step: .rename(from: "score", to: "rating"))]
            // Set as a server cut short would leave it: the schema stored, its records not migrated yet.
            try await admin.setSchema(project: "field", renamed, migrate: false)
            #expect(try await admin.schemaVersions(project: "field").last?.migration.state == .pending)
            let before = try await fixture.pullAll("alice", "jobs").changes
            #expect(before.allSatisfy { $0.data?["rating"] != nil && $0.data?["score"] == nil })

            await fixture.server.server.resumeMigrations()
            let version = try #require(try await admin.schemaVersions(project: "field").last)
            #expect(version.migration.state == .done)
            #expect(version.migration.migrated == 30)
            #expect(try await admin.migrate(project: "field") == 0)
        }
    }
}
