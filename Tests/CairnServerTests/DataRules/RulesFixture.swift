import CairnProtocol
import CairnServer
import CairnTesting
import Foundation

/// The standard fixture with a `jobs` collection under data rules: a member reads the jobs assigned to them or in
/// one of their `regions` claims, and writes only the jobs assigned to them.
enum RulesFixture {
    static let readRule: Filter = .or([
        .condition("assignee", .eq, RuleParameter.userName.value), .condition("region", .in, RuleParameter.claim("regions").value),
    ])
    static let writeRule: Filter = .condition("assignee", .eq, RuleParameter.userName.value)

    static func jobs(read: Filter? = readRule, write: Filter? = writeRule) -> CollectionSchema {
        CollectionSchema(
            name: "jobs",
            fields: [
                FieldSchema(name: "assignee", type: .string), FieldSchema(name: "region", type: .string),
                FieldSchema(name: "priority", type: .integer), FieldSchema(name: "photo", type: .file), FieldSchema(name: "title", type: .string),
            ],
            rules: DataRules(read: read, write: write))
    }

    static func schema(read: Filter? = readRule, write: Filter? = writeRule) -> Schema {
        Schema(collections: Fixture.schema.collections + [jobs(read: read, write: write)])
    }

    /// The fixture with `jobs` and `bob` claiming the `north` region.
    static func start() async throws -> Fixture {
        let fixture = try await Fixture.start()
        try await fixture.server.server.admin.setSchema(project: Fixture.project, schema())
        try await fixture.server.server.admin.setClaims(user: "bob", project: Fixture.project, ["regions": ["north"]])
        return fixture
    }

    static func job(_ id: String, assignee: String, region: String, _ op: OperationKind = .create) -> SyncOperation {
        SyncOperation(opId: newOpID(), collection: "jobs", id: id, op: op, data: ["assignee": .string(assignee), "region": .string(region)])
    }

    /// j1 alice/north, j2 carl/south, j3 bob/south, j4 carl/north, j5 rita/east, written by the admin.
    static func seed(_ fixture: Fixture) async throws {
        let results = try await fixture.push("ada", [
            job("j1", assignee: "alice", region: "north"), job("j2", assignee: "carl", region: "south"),
            job("j3", assignee: "bob", region: "south"), job("j4", assignee: "carl", region: "north"),
            job("j5", assignee: "rita", region: "east"),
        ])
        precondition(results.allSatisfy { $0.status == .applied })
    }

    /// Ids of live records in a list of changes, and those sent as gone or deleted.
    static func split(_ changes: [Change]) -> (data: Set<String>, gone: Set<String>) {
        (Set(changes.filter { !$0.deleted && !$0.gone }.map(\.id)), Set(changes.filter { $0.deleted || $0.gone }.map(\.id)))
    }
}
