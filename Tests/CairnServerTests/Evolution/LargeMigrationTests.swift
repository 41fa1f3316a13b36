import CairnProtocol
import CairnTesting
import Foundation
import Testing

@testable import CairnServer

@Suite("Schema evolution: a large migration under writers")
struct LargeMigrationTests {
    static let records = 100_000

    @Test("a migration of 100,000 records while writers push: every write kept, every record migrated once")
    func largeMigration() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let admin = fixture.server.server.admin
            let storage = fixture.server.server.storage
            #expect(try await SchemaClassificationTests.put(fixture, SchemaClassificationTests.base).status == 200)
            // The records are stored directly through the sync layer (HTTP would only add load to the machine).
            let schema = try #require(try await storage.schema(project: "field"))
            for batch in 0..<(Self.records / 5000) {
                let operations = (0..<5000).map { offset in
                    let index = batch * 5000 + offset
                    return SchemaMigrationTests.create("j\(index)", ["title": .string("job \(index)"), "score": .integer(Int64(index))])
                }
                let outcome = try await BatchService(storage: storage).apply(
                    BatchRequest(operations: operations), project: "field", schema: schema, user: "alice", now: Date())
                #expect(outcome.results.allSatisfy { $0.status == .applied })
            }
            var renamed = SchemaClassificationTests.base
            renamed.collections[3].fields[1].name = "rating"
            renamed.migrations = [SchemaMigration(collection: "jobs", step: .rename(from: "score", to: "rating"))]
            try await admin.setSchema(project: "field", renamed, migrate: false)
            let before = try await storage.withProjectWriteTransaction(project: "field") { .commit(try await $0.headVersion()) }

            // Writers keep pushing while the migration runs: new builds set titles, old builds (schema 2) set scores.
            async let migration = admin.migrate(project: "field")
            let writes = try await withThrowingTaskGroup(of: [String: JSONValue].self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        var written: [String: JSONValue] = [:]
                        for round in 0..<25 {
                            var operations: [SyncOperation] = []
                            for slot in 0..<20 {
                                // Each record is written once, spread over the whole collection.
                                let index = ((writer * 25 + round) * 20 + slot) * 49 % Self.records
                                let oldBuild = writer % 2 == 1
                                let data: [String: JSONValue] = oldBuild ? ["score": .integer(-Int64(index))] : ["title": .string("written \(index)")]
                                operations.append(SyncOperation(opId: newOpID(), collection: "jobs", id: "j\(index)", op: .patch, data: data))
                                written["j\(index)"] = oldBuild ? ["rating": .integer(-Int64(index))] : ["title": .string("written \(index)")]
                            }
                            let reply = try await SchemaMigrationTests.push(fixture, writer % 2 == 1 ? "bob" : "alice", number: writer % 2 == 1 ? 2 : nil, operations)
                            let results = try reply.decode(BatchResponse.self).results
                            #expect(results.allSatisfy { $0.status == .applied })
                        }
                        return written
                    }
                }
                var all: [String: JSONValue] = [:]
                for try await written in group { all.merge(written) { first, _ in first } }
                return all
            }
            let migrated = try await migration
            let after = try await storage.withProjectWriteTransaction(project: "field") { .commit(try await $0.headVersion()) }
            #expect(writes.count == 2000)
            // Every version after the schema was set is one write or one record migrated: nothing was written twice.
            #expect(after - before == Int64(writes.count) + migrated)
            #expect(migrated <= Int64(Self.records) && migrated >= Int64(Self.records - writes.count))
            #expect(try await admin.migrate(project: "field") == 0)

            let records = try await fixture.pullAll("alice", "jobs", limit: 10_000).changes
            #expect(records.count == Self.records)
            var unmigrated = 0, lost = 0
            for record in records {
                let data = record.data ?? [:]
                if data["score"] != nil || data["rating"] == nil { unmigrated += 1 }
                if let expected = writes[record.id]?.objectValue, expected.contains(where: { data[$0.key] != $0.value }) { lost += 1 }
            }
            #expect(unmigrated == 0)
            #expect(lost == 0)
            let version = try #require(try await admin.schemaVersions(project: "field").last)
            #expect(version.migration.state == .done)
            #expect(version.migration.migrated == migrated)
        }
    }
}
