import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// `reference` fields on the server (PROTOCOL.md, References): targets checked at write time, `onDelete` applied in
/// the delete's transaction, the changes in the feed. Runs on SQLite, and on PostgreSQL with
/// `CAIRN_TEST_SERVER_STORAGE=postgres`.
@Suite("References between records: checked targets, restrict, nullify and cascade")
struct ReferenceTests {
    /// `sites` (with a region, readable by bob only in the north), `jobs` naming a site (cascade), `visits` naming a
    /// job (nullify) and `audits` naming a site (restrict).
    static func start() async throws -> Fixture {
        let fixture = try await Fixture.start()
        let schema = Schema(collections: Fixture.schema.collections + [
            CollectionSchema(
                name: "sites", fields: [FieldSchema(name: "name", type: .string), FieldSchema(name: "region", type: .string)],
                rules: DataRules(read: .or([.condition("region", .eq, "north"), .condition("region", .eq, .string("open"))]))),
            CollectionSchema(name: "jobs", fields: [FieldSchema(name: "title", type: .string), .reference("site", to: "sites", onDelete: .cascade)]),
            CollectionSchema(name: "visits", fields: [FieldSchema(name: "note", type: .string), .reference("job", to: "jobs", onDelete: .nullify)]),
            CollectionSchema(name: "audits", fields: [.reference("site", to: "sites")]),
        ])
        try await fixture.server.server.admin.setSchema(project: Fixture.project, schema)
        return fixture
    }

    static func op(_ collection: String, _ id: String, _ kind: OperationKind = .create, _ data: [String: JSONValue]? = nil, base: Int64? = nil) -> SyncOperation {
        SyncOperation(opId: newOpID(), collection: collection, id: id, op: kind, baseVersion: base, data: data)
    }

    @Test("a reference must name a live record the writer may read; one created earlier in the same batch counts")
    func targetsChecked() async throws {
        let fixture = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            let seeded = try await fixture.push("ada", [
                Self.op("sites", "north-1", .create, ["name": "N", "region": "north"]), Self.op("sites", "south-1", .create, ["name": "S", "region": "south"]),
            ])
            #expect(seeded.allSatisfy { $0.status == .applied })
            // The target and its referrer in one batch, target first.
            let same = try await fixture.push("alice", [
                Self.op("sites", "open-1", .create, ["name": "O", "region": "open"]), Self.op("jobs", "j-1", .create, ["title": "t", "site": "open-1"]),
            ])
            #expect(same.map(\.status) == [.applied, .applied])
            let missing = try await fixture.push("alice", [Self.op("jobs", "j-2", .create, ["title": "t", "site": "nowhere"])])
            #expect(missing[0].status == .rejected && missing[0].error?.code == .validationFailed)
            #expect(missing[0].error?.details?["field"] == "site")
            let wrongType = try await fixture.push("alice", [Self.op("jobs", "j-3", .create, ["site": 7])])
            #expect(wrongType[0].status == .rejected && wrongType[0].error?.details?["field"] == "site")
            // bob's read rule shows him only the northern and open sites: he may not name the southern one.
            let hidden = try await fixture.push("bob", [Self.op("jobs", "j-4", .create, ["site": "south-1"])])
            #expect(hidden[0].status == .rejected && hidden[0].error?.details?["field"] == "site")
            #expect(try await fixture.push("bob", [Self.op("jobs", "j-5", .create, ["site": "north-1"])])[0].status == .applied)
            // An admin is bound by no rule.
            #expect(try await fixture.push("ada", [Self.op("jobs", "j-6", .create, ["site": "south-1"])])[0].status == .applied)
            // A deleted target is not there.
            let gone = try await fixture.push("ada", [Self.op("sites", "open-2", .create, ["region": "open"]), Self.op("sites", "open-2", .delete)])
            #expect(gone.map(\.status) == [.applied, .applied])
            #expect(try await fixture.push("alice", [Self.op("jobs", "j-7", .create, ["site": "open-2"])])[0].status == .rejected)
        }
    }

    @Test("deleting a site cascades to its jobs, whose visits lose their job; each change reaches the feed as an ordinary change")
    func cascadeAndNullify() async throws {
        let fixture = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            let made = try await fixture.push("ada", [
                Self.op("sites", "s-1", .create, ["region": "north"]), Self.op("sites", "s-2", .create, ["region": "north"]),
                Self.op("jobs", "j-1", .create, ["title": "a", "site": "s-1"]), Self.op("jobs", "j-2", .create, ["title": "b", "site": "s-1"]),
                Self.op("jobs", "j-3", .create, ["title": "c", "site": "s-2"]),
                Self.op("visits", "v-1", .create, ["note": "x", "job": "j-1"]), Self.op("visits", "v-2", .create, ["note": "y", "job": "j-3"]),
            ])
            #expect(made.allSatisfy { $0.status == .applied })
            let jobsCursor = try await fixture.pullAll("alice", "jobs").cursor
            let visitsCursor = try await fixture.pullAll("alice", "visits").cursor
            let deleted = try await fixture.push("alice", [Self.op("sites", "s-1", .delete, base: made[0].record?.version)])
            #expect(deleted[0].status == .applied)
            let jobs = try await fixture.pullAll("alice", "jobs", since: jobsCursor).changes
            #expect(Set(jobs.filter(\.deleted).map(\.id)) == ["j-1", "j-2"])
            let visits = try await fixture.pullAll("alice", "visits", since: visitsCursor).changes
            #expect(visits.map(\.id) == ["v-1"])
            #expect(visits.first?.data?["job"] == nil && visits.first?.data?["note"] == "x")
            // Nothing else changed: j-3 and v-2 still stand as they were.
            let all = try await fixture.pullAll("alice", "jobs").changes
            #expect(all.filter { !$0.deleted }.map(\.id) == ["j-3"])
        }
    }

    @Test("restrict refuses the delete while a live record names the target, also through a cascade, and allows it once none does")
    func restrict() async throws {
        let fixture = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            let made = try await fixture.push("ada", [
                Self.op("sites", "s-1", .create, ["region": "north"]), Self.op("audits", "a-1", .create, ["site": "s-1"]),
                Self.op("jobs", "j-1", .create, ["site": "s-1"]),
            ])
            #expect(made.allSatisfy { $0.status == .applied })
            let refused = try await fixture.push("ada", [Self.op("sites", "s-1", .delete)])
            #expect(refused[0].status == .rejected && refused[0].error?.code == .validationFailed)
            #expect(refused[0].error?.details?["collection"] == "audits" && refused[0].error?.details?["id"] == "a-1")
            // Nothing happened: the cascade to j-1 did not run either.
            let jobs = try await fixture.pullAll("ada", "jobs").changes
            #expect(jobs.map(\.id) == ["j-1"] && !jobs[0].deleted)
            let cleared = try await fixture.push("ada", [Self.op("audits", "a-1", .delete), Self.op("sites", "s-1", .delete)])
            #expect(cleared.map(\.status) == [.applied, .applied])
            #expect(try await fixture.pullAll("ada", "jobs").changes.allSatisfy(\.deleted))
        }
    }

    @Test("a schema's reference must name a collection of it; collection and onDelete only on references; a required field is not nullified")
    func schemaRules() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let bad: [JSONValue] = [
                ["name": "jobs", "fields": [["name": "site", "type": "reference"]]],
                ["name": "jobs", "fields": [["name": "site", "type": "reference", "collection": "nowhere"]]],
                ["name": "jobs", "fields": [["name": "site", "type": "string", "collection": "notes"]]],
                ["name": "jobs", "fields": [["name": "site", "type": "reference", "collection": "notes", "onDelete": "nullify", "required": true]]],
                ["name": "jobs", "fields": [["name": "site", "type": "reference", "collection": "notes", "onDelete": "explode"]]],
            ]
            for collection in bad {
                let body: JSONValue = ["collections": .array(Fixture.schema.collections.map { try! JSONValue(parsing: Array(CairnJSON.encode($0))) } + [collection])]
                let reply = try await fixture.http.send(.PUT, "/v1/projects/\(Fixture.project)/schema", token: fixture.tokens["ada"], json: body)
                #expect(reply.status == 422 || reply.status == 400, "\(collection)")
            }
        }
    }
}
