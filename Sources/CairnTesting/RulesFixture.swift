import CairnProtocol
import CairnServer
import Foundation

/// The standard ``Fixture`` with a `jobs` collection under data rules: a member reads the jobs assigned to them or
/// in one of their `regions` claims, and writes only the jobs assigned to them.
public enum RulesFixture {
    /// The read rule: `assignee` is the user, or `region` is one of the user's `regions` claims.
    public static let readRule: Filter = .or([
        .condition("assignee", .eq, RuleParameter.userName.value), .condition("region", .in, RuleParameter.claim("regions").value),
    ])
    /// The write rule: `assignee` is the user.
    public static let writeRule: Filter = .condition("assignee", .eq, RuleParameter.userName.value)

    /// The `jobs` collection (assignee, region, priority, photo, title) with these rules.
    public static func jobs(read: Filter? = readRule, write: Filter? = writeRule) -> CollectionSchema {
        CollectionSchema(
            name: "jobs",
            fields: [
                FieldSchema(name: "assignee", type: .string), FieldSchema(name: "region", type: .string),
                FieldSchema(name: "priority", type: .integer), FieldSchema(name: "photo", type: .file), FieldSchema(name: "title", type: .string),
            ],
            rules: DataRules(read: read, write: write))
    }

    /// ``Fixture/schema`` plus `jobs`.
    public static func schema(read: Filter? = readRule, write: Filter? = writeRule) -> Schema {
        Schema(collections: Fixture.schema.collections + [jobs(read: read, write: write)])
    }

    /// The fixture with `jobs` and `bob` claiming the `north` region.
    public static func start() async throws -> Fixture {
        let fixture = try await Fixture.start()
        try await fixture.server.server.admin.setSchema(project: Fixture.project, schema())
        try await fixture.server.server.admin.setClaims(user: "bob", project: Fixture.project, ["regions": ["north"]])
        return fixture
    }

    /// A create (or `op`) of a job.
    public static func job(_ id: String, assignee: String, region: String, _ op: OperationKind = .create) -> SyncOperation {
        SyncOperation(opId: newOpID(), collection: "jobs", id: id, op: op, data: ["assignee": .string(assignee), "region": .string(region)])
    }

    /// j1 alice/north, j2 carl/south, j3 bob/south, j4 carl/north, j5 rita/east, written by the admin.
    public static func seed(_ fixture: Fixture) async throws {
        let results = try await fixture.push("ada", [
            job("j1", assignee: "alice", region: "north"), job("j2", assignee: "carl", region: "south"),
            job("j3", assignee: "bob", region: "south"), job("j4", assignee: "carl", region: "north"),
            job("j5", assignee: "rita", region: "east"),
        ])
        guard results.allSatisfy({ $0.status == .applied }) else { throw ErrorBody(code: .internalError, message: "seeding jobs failed") }
    }

    /// Ids of live records in a list of changes, and those sent as gone or deleted.
    public static func split(_ changes: [Change]) -> (data: Set<String>, gone: Set<String>) {
        (Set(changes.filter { !$0.deleted && !$0.gone }.map(\.id)), Set(changes.filter { $0.deleted || $0.gone }.map(\.id)))
    }
}
