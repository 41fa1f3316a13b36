import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Schema evolution: admins setting schemas at the same moment")
struct ConcurrentSchemaTests {
    @Test("schemas set at once each take their own number, or are refused; none replaces another's")
    func concurrentSetSchema() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let admin = fixture.server.server.admin
            let start = try #require(try await fixture.server.server.admin.schemaVersions(project: Fixture.project).last?.schema.number)
            // Eight admins each add a collection of their own to the schema they read, all at once: each gets the number
            // its schema took, or nil when refused.
            let outcomes = try await withThrowingTaskGroup(of: (Int?, String).self) { group in
                for index in 0..<8 {
                    group.addTask {
                        var schema = Fixture.schema
                        schema.collections.append(CollectionSchema(name: "extra_\(index)", fields: [FieldSchema(name: "note", type: .string)]))
                        do {
                            return (try await admin.setSchema(project: Fixture.project, schema).number, "extra_\(index)")
                        } catch let error as ErrorBody where error.code == .conflict || error.code == .incompatibleSchema {
                            // Refused: changed meanwhile, or (read after another's commit) it would drop that one's collection.
                            return (nil, "extra_\(index)")
                        }
                    }
                }
                return try await group.reduce(into: [(Int?, String)]()) { $0.append($1) }
            }
            var set: [Int: String] = [:]
            for case let (number?, name) in outcomes { set[number] = name }
            let refused = outcomes.filter { $0.0 == nil }.count
            #expect(set.count + refused == 8 && !set.isEmpty)
            // Each number kept holds the schema that took it.
            let versions = try await admin.schemaVersions(project: Fixture.project).filter { $0.schema.number > start }
            #expect(versions.map(\.schema.number) == Array(set.keys).sorted())
            for version in versions {
                let name = try #require(set[version.schema.number])
                #expect(version.schema.collection(named: name) != nil, "version \(version.schema.number) lost \(name)")
            }
        }
    }
}
