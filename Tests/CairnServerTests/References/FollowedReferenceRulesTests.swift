import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// Data rules that follow a reference (`{"field": "site.region", ...}`, PROTOCOL.md, Data rules): the feed's SQL reads
/// the referenced record, writes are judged by it, and a change to a followed field re-judges the referrers for every
/// reader. Runs on SQLite, and on PostgreSQL with `CAIRN_TEST_SERVER_STORAGE=postgres`.
@Suite("Data rules that follow a reference")
struct FollowedReferenceRulesTests {
    /// `sites` with a region, `jobs` naming a site, readable (and so writable) where the site's region is the
    /// reader's `region` claim: alice north, bob south, rita (a reader) east.
    static func start() async throws -> Fixture {
        let fixture = try await Fixture.start()
        let admin = fixture.server.server.admin
        try await admin.setSchema(project: Fixture.project, schema)
        for (user, region) in [("alice", "north"), ("bob", "south"), ("rita", "east")] {
            try await admin.setClaims(user: user, project: Fixture.project, ["region": .string(region)])
        }
        return fixture
    }

    static let schema = Schema(collections: Fixture.schema.collections + [
        CollectionSchema(name: "sites", fields: [FieldSchema(name: "name", type: .string), FieldSchema(name: "region", type: .string)]),
        CollectionSchema(
            name: "jobs", fields: [FieldSchema(name: "title", type: .string), .reference("site", to: "sites")],
            rules: DataRules(read: .condition("site.region", .eq, RuleParameter.claim("region").value))),
    ])

    static func op(_ collection: String, _ id: String, _ kind: OperationKind = .create, _ data: [String: JSONValue]? = nil) -> SyncOperation {
        SyncOperation(opId: newOpID(), collection: collection, id: id, op: kind, data: data)
    }

    /// The ids of the changes that carry data, and of those that say gone.
    static func split(_ changes: [Change]) -> (data: [String], gone: [String]) {
        (changes.filter { !$0.gone && !$0.deleted }.map(\.id).sorted(), changes.filter(\.gone).map(\.id).sorted())
    }

    @Test("the feed, the digest, writes and explain follow the referenced record; a moved site moves its jobs between readers, and no one else hears of them")
    func followsReference() async throws {
        let fixture = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            let seeded = try await fixture.push("ada", [
                Self.op("sites", "s-n", .create, ["name": "N", "region": "north"]), Self.op("sites", "s-s", .create, ["name": "S", "region": "south"]),
                Self.op("sites", "s-e", .create, ["name": "E", "region": "east"]),
                Self.op("jobs", "j1", .create, ["title": "one", "site": "s-n"]), Self.op("jobs", "j2", .create, ["title": "two", "site": "s-s"]),
            ])
            #expect(seeded.allSatisfy { $0.status == .applied })
            var cursors: [String: String] = [:]
            for (user, ids) in [("alice", ["j1"]), ("bob", ["j2"]), ("rita", [])] {
                let pulled = try await fixture.pullAll(user, "jobs", limit: 1)
                #expect(Self.split(pulled.changes).data == ids, "\(user)")
                cursors[user] = pulled.cursor
                let digest = try await fixture.http.send(.GET, "/v1/projects/field/collections/jobs/digest", token: fixture.tokens[user])
                    .decode(DigestResponse.self)
                #expect(digest.count == ids.count, "\(user)")
            }

            // Writes are judged by the site: alice may create and change northern jobs only.
            let writes = try await fixture.push("alice", [
                Self.op("jobs", "j3", .create, ["title": "three", "site": "s-n"]), Self.op("jobs", "j4", .create, ["title": "four", "site": "s-s"]),
                Self.op("jobs", "j2", .patch, ["title": "mine?"]), Self.op("jobs", "j1", .patch, ["site": "s-s"]),
            ])
            #expect(writes.map(\.status) == [.applied, .rejected, .rejected, .rejected])
            #expect(writes.dropFirst().allSatisfy { $0.error?.code == .forbidden })
            let why = try await fixture.server.server.admin.explain(project: Fixture.project, user: "alice", collection: "jobs", id: "j1")
            #expect(why.read.allowed && why.write.allowed, "\(why.read.reason) \(String(describing: why.read.bound))")
            #expect(try await fixture.server.server.admin.explain(project: Fixture.project, user: "alice", collection: "jobs", id: "j2").read.allowed == false)
            for user in ["alice", "bob", "rita"] { cursors[user] = try await fixture.pullAll(user, "jobs", since: cursors[user]).cursor }

            // A field no rule follows changes: the jobs are not written again.
            let head = try await fixture.pullAll("ada", "jobs").cursor
            _ = try await fixture.push("ada", [Self.op("sites", "s-s", .patch, ["name": "South yard"])])
            #expect(try await fixture.pullAll("ada", "jobs", since: head).changes.isEmpty)

            // The southern site moves north: j2 reaches alice, bob hears it is gone, rita hears nothing.
            _ = try await fixture.push("ada", [Self.op("sites", "s-s", .patch, ["region": "north"])])
            var delta = try await fixture.pullAll("alice", "jobs", since: cursors["alice"], limit: 1)
            #expect(Self.split(delta.changes).data == ["j2"] && Self.split(delta.changes).gone.isEmpty)
            #expect(delta.changes.first?.data?["title"] == "two")
            cursors["alice"] = delta.cursor
            delta = try await fixture.pullAll("bob", "jobs", since: cursors["bob"])
            #expect(Self.split(delta.changes).gone == ["j2"] && Self.split(delta.changes).data.isEmpty)
            cursors["bob"] = delta.cursor
            delta = try await fixture.pullAll("rita", "jobs", since: cursors["rita"])
            #expect(delta.changes.isEmpty)
            cursors["rita"] = delta.cursor
            // alice may now change it.
            #expect(try await fixture.push("alice", [Self.op("jobs", "j2", .patch, ["title": "mine now"])])[0].status == .applied)

            // A job moved to the eastern site: alice hears it is gone, rita receives it, bob hears nothing.
            _ = try await fixture.push("ada", [Self.op("jobs", "j1", .patch, ["site": "s-e"])])
            let split = Self.split(try await fixture.pullAll("alice", "jobs", since: cursors["alice"]).changes)
            #expect(split.gone == ["j1"])
            #expect(Self.split(try await fixture.pullAll("rita", "jobs", since: cursors["rita"]).changes).data == ["j1"])
            #expect(try await fixture.pullAll("bob", "jobs", since: cursors["bob"]).changes.isEmpty)

            // A fresh device of each user gets exactly its region's jobs.
            for (user, ids) in [("alice", ["j2", "j3"]), ("bob", []), ("rita", ["j1"])] {
                #expect(Self.split(try await fixture.pullAll(user, "jobs").changes).data == ids, "\(user)")
            }
        }
    }

    @Test("a site that moves away and back between two pulls is judged as of the state the reader received")
    func movesAwayAndBack() async throws {
        let fixture = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("ada", [
                Self.op("sites", "s-1", .create, ["region": "north"]), Self.op("jobs", "j1", .create, ["title": "one", "site": "s-1"]),
            ])
            let alice = try await fixture.pullAll("alice", "jobs")
            let bob = try await fixture.pullAll("bob", "jobs")
            #expect(Self.split(alice.changes).data == ["j1"] && bob.changes.isEmpty)
            _ = try await fixture.push("ada", [Self.op("sites", "s-1", .patch, ["region": "south"])])
            _ = try await fixture.push("ada", [Self.op("sites", "s-1", .patch, ["region": "north"])])
            // alice's copy was judged with the site in the north, and it is there again: the change carries data.
            #expect(Self.split(try await fixture.pullAll("alice", "jobs", since: alice.cursor).changes).data == ["j1"])
            // bob never held it, and cannot read it now: nothing, not even the id.
            #expect(try await fixture.pullAll("bob", "jobs", since: bob.cursor).changes.isEmpty)
            // j1 was written again (same data, new versions): a write based on the version alice received meets the
            // collection's conflict policy (`reject`), as PROTOCOL.md says.
            let received = try #require(alice.changes.first?.version)
            let stale = SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .update, baseVersion: received, data: ["title": "x", "site": "s-1"])
            let answer = try await fixture.push("alice", [stale])
            #expect(answer[0].status == .conflict)
            #expect(answer[0].current?.data["title"] == "one")
        }
    }

    @Test("a rule may follow one reference to one declared field; anything else is refused with its place")
    func schemaChecks() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            func schema(_ field: String) -> Schema {
                Schema(collections: Fixture.schema.collections + [
                    CollectionSchema(name: "sites", fields: [FieldSchema(name: "region", type: .string), FieldSchema(name: "extra", type: .json)]),
                    CollectionSchema(
                        name: "jobs", fields: [.reference("site", to: "sites")],
                        rules: DataRules(read: .condition(field, .eq, RuleParameter.claim("region").value))),
                ])
            }
            for field in ["site.nope", "site.region.more", "site.extra"] {
                let reply = try await fixture.http.send(
                    .PUT, "/v1/projects/field/schema", token: fixture.tokens["ada"], value: schema(field))
                #expect(reply.status == 422, "\(field)")
                let error = try reply.decode(ErrorEnvelope.self).error
                #expect(error.code == .validationFailed && error.message.contains("jobs.rules.read"), "\(field): \(error.message)")
            }
            for field in ["site.region", "site.id"] {
                let reply = try await fixture.http.send(.PUT, "/v1/projects/field/schema", token: fixture.tokens["ada"], value: schema(field))
                #expect(reply.status == 200, "\(field)")
            }
        }
    }
}
