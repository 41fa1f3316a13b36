import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Data rules on every route", .timeLimit(.minutes(20)))
struct DataRulesTests {
    @Test("each member pulls, filters and verifies exactly what the read rule allows; the admin sees everything")
    func readsFollowRules() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            let expected: [String: Set<String>] = [
                "alice": ["j1"], "bob": ["j1", "j3", "j4"], "rita": ["j5"], "ada": ["j1", "j2", "j3", "j4", "j5"],
            ]
            for (user, ids) in expected {
                let snapshot = try await fixture.pullAll(user, "jobs", limit: 2)
                #expect(Set(snapshot.changes.map(\.id)) == ids, "\(user)")
                #expect(!snapshot.changes.contains { $0.gone || $0.deleted })
                // A download query only narrows: asking for every region gives nothing more.
                let wide = try await fixture.pullAll(user, "jobs", filter: .condition("region", .in, ["north", "south", "east"]))
                #expect(Set(wide.changes.map(\.id)) == ids, "\(user)")
                let south = try await fixture.pullAll(user, "jobs", filter: .condition("region", .eq, "south"))
                #expect(Set(south.changes.map(\.id)) == ids.intersection(["j2", "j3"]), "\(user)")
                // The digest covers the readable records only, so a device's copy verifies.
                let digest = try await fixture.http.send(.GET, "/v1/projects/field/collections/jobs/digest", token: fixture.tokens[user])
                    .decode(DigestResponse.self)
                let local = CollectionDigest(pairs: snapshot.changes.map { ($0.id, $0.version) })
                #expect(digest.count == ids.count)
                #expect(digest.digest == local.value)
            }
        }
    }

    @Test("writes outside the rules are refused as forbidden and change nothing; an atomic batch is refused whole")
    func writesFollowRules() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            let before = try await fixture.pullAll("ada", "jobs")
            let refused = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j2", op: .patch, data: ["title": "mine now"]),  // carl's
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j4", op: .delete),  // readable by nobody but carl
                RulesFixture.job("j9", assignee: "bob", region: "north"),  // created for someone else
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .patch, data: ["assignee": "bob"]),  // given away
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j2", op: .create, data: ["assignee": "alice"]),  // exists, unseen
            ])
            for result in refused {
                #expect(result.status == .rejected)
                #expect(result.error?.code == .forbidden)
            }
            // A refusal never carries the record it refused.
            #expect(refused.allSatisfy { $0.current == nil && $0.record == nil })
            // bob reads j4 (north) but may write only his own jobs.
            let bobs = try await fixture.push("bob", [SyncOperation(opId: newOpID(), collection: "jobs", id: "j4", op: .patch, data: ["title": "x"])])
            #expect(bobs[0].error?.code == .forbidden)
            let atomic = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .patch, data: ["title": "fine"]),
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j3", op: .patch, data: ["title": "not mine"]),
            ], atomic: true)
            #expect(atomic.map(\.error?.code) == [.batchAborted, .forbidden])
            let after = try await fixture.pullAll("ada", "jobs")
            #expect(after.changes == before.changes)
            // Within the rules, writes apply.
            let allowed = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .patch, data: ["title": "done"]),
                RulesFixture.job("j10", assignee: "alice", region: "west"),
            ])
            #expect(allowed.allSatisfy { $0.status == .applied })
            // The admin is not bound.
            let admin = try await fixture.push("ada", [SyncOperation(opId: newOpID(), collection: "jobs", id: "j2", op: .delete)])
            #expect(admin[0].status == .applied)
        }
    }

    @Test("a record reassigned away, a claim changed, a rule changed and a role lowered reach devices as gone, and nothing held is sent again")
    func visibilityChanges() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            let admin = fixture.server.server.admin
            var alice = try await fixture.pullAll("alice", "jobs").cursor
            var bob = try await fixture.pullAll("bob", "jobs").cursor

            // j1 is reassigned from alice to carl: alice's device drops it; bob (north) keeps reading it, changed.
            _ = try await fixture.push("ada", [SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .patch, data: ["assignee": "carl"])])
            var delta = try await fixture.pullAll("alice", "jobs", since: alice)
            #expect(delta.changes.map(\.id) == ["j1"])
            #expect(delta.changes.first?.gone == true)
            #expect(delta.changes.first?.data == nil)
            alice = delta.cursor
            delta = try await fixture.pullAll("bob", "jobs", since: bob)
            #expect(RulesFixture.split(delta.changes).data == ["j1"])
            bob = delta.cursor
            // Changes to records a member never could read reach nobody's device: not even their ids.
            _ = try await fixture.push("ada", [
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j2", op: .patch, data: ["title": "south news"]),
                RulesFixture.job("j6", assignee: "carl", region: "south"),
            ])
            #expect(try await fixture.pullAll("alice", "jobs", since: alice).changes.isEmpty)

            // bob's regions become south: j1 and j4 (north) go, j2 and j6 (south) arrive, j3 (his own) is not sent again.
            try await admin.setClaims(user: "bob", project: "field", ["regions": ["south"]])
            delta = try await fixture.pullAll("bob", "jobs", since: bob, limit: 1)
            var split = RulesFixture.split(delta.changes)
            #expect(split.gone == ["j1", "j4"])
            #expect(split.data == ["j2", "j6"])
            #expect(delta.changes.count == 4)
            bob = delta.cursor

            // The read rule loses its region condition: bob keeps only his own job.
            try await admin.setSchema(project: "field", RulesFixture.schema(read: RulesFixture.writeRule))
            delta = try await fixture.pullAll("bob", "jobs", since: bob)
            split = RulesFixture.split(delta.changes)
            #expect(split.gone == ["j2", "j6"])
            #expect(split.data.isEmpty)
            bob = delta.cursor

            // alice as admin holds everything; lowered to writer, her device drops all but her own (none left).
            try await admin.grant(user: "alice", project: "field", role: .admin)
            let everything = try await fixture.pullAll("alice", "jobs", since: alice)
            #expect(RulesFixture.split(everything.changes).data == ["j1", "j2", "j3", "j4", "j5", "j6"])
            try await admin.grant(user: "alice", project: "field", role: .writer)
            delta = try await fixture.pullAll("alice", "jobs", since: everything.cursor)
            split = RulesFixture.split(delta.changes)
            #expect(split.gone == ["j1", "j2", "j3", "j4", "j5", "j6"])
            #expect(split.data.isEmpty)
        }
    }

    @Test("live notices reach a bound reader only when a record it may read changed")
    func notices() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let url = fixture.server.baseURL.appendingPathComponent("v1/projects/field/events")
            let lines = try await EventStreamReader.open(url: url, token: fixture.tokens["alice"]!)
            try await withCleanup({ await lines.close() }) {
                // carl's job in the south: nothing for alice. Then one of hers: a notice naming only the collection.
                _ = try await fixture.push("ada", [RulesFixture.job("j2", assignee: "carl", region: "south")])
                _ = try await fixture.push("ada", [RulesFixture.job("j1", assignee: "alice", region: "north")])
                let event = try await lines.nextData()
                let notice = try CairnJSON.decode(ChangeNotice.self, from: Array(event.utf8))
                #expect(notice == ChangeNotice(collection: "jobs", version: 2))
            }
        }
    }

    @Test("files follow the records: a member downloads a file it uploaded, or one held by a record it may read")
    func files() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let bytes = Data("survey photo".utf8)
            let photo = try await fixture.upload(bytes)  // uploaded by alice
            let loose = try await fixture.upload(bytes, name: "loose.jpg")
            let shared = try await fixture.upload(bytes, name: "shared.jpg", public: true)
            _ = try await fixture.push("ada", [
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j4", op: .create,
                              data: ["assignee": "carl", "region": "north", "photo": .string(photo.id)]),
            ])
            func status(_ user: String, _ id: String, content: Bool) async throws -> Int {
                let path = "/v1/projects/field/files/\(id)" + (content ? "/content" : "")
                return try await fixture.http.send(.GET, path, token: fixture.tokens[user]).status
            }
            for content in [false, true] {
                #expect(try await status("alice", photo.id, content: content) == 200)  // the uploader
                #expect(try await status("bob", photo.id, content: content) == 200)  // reads j4 (north)
                #expect(try await status("rita", photo.id, content: content) == 404)  // reads no record holding it
                #expect(try await status("rita", loose.id, content: content) == 404)
                #expect(try await status("rita", shared.id, content: content) == 200)  // public
                #expect(try await status("ada", loose.id, content: content) == 200)  // admin
            }
            let list = try await fixture.http.send(.GET, "/v1/projects/field/files", token: fixture.tokens["rita"]).decode(FileList.self)
            #expect(list.files.map(\.id) == [shared.id])
        }
    }

    @Test("rules are checked when the schema is set: unknown fields, unknown parameters and types that do not fit")
    func validation() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let cases: [(Filter, String)] = [
                (.condition("owner", .eq, RuleParameter.userName.value), "jobs.rules.read"),
                (.condition("assignee", .eq, .object(["param": "user.email"])), "jobs.rules.read"),
                (.condition("priority", .eq, RuleParameter.userName.value), "jobs.rules.read"),
                (.condition("region", .exists, RuleParameter.claim("x").value), "jobs.rules.read"),
            ]
            for (rule, place) in cases {
                let reply = try await fixture.http.send(
                    .PUT, "/v1/projects/field/schema", token: fixture.tokens["ada"], value: RulesFixture.schema(read: rule))
                #expect(reply.status == 422)
                let error = try reply.decode(ErrorEnvelope.self).error
                #expect(error.code == .validationFailed)
                #expect(error.details?["field"] == .string(place))
            }
            // Claims of any type are accepted when set; a claim that does not fit matches nothing.
            try await fixture.server.server.admin.setClaims(user: "bob", project: "field", ["regions": ["nested": true]])
            try await RulesFixture.seed(fixture)
            #expect(Set(try await fixture.pullAll("bob", "jobs").changes.map(\.id)) == ["j3"])
        }
    }

    @Test("explain and claims are for project admins, and say which rule and condition decide")
    func explainAndClaims() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            let path = "/v1/projects/field/explain?user=bob&collection=jobs&id=j4"
            #expect(try await fixture.http.send(.GET, path).status == 401)
            #expect(try await fixture.http.send(.GET, path, token: fixture.tokens["alice"]).status == 403)
            #expect(try await fixture.http.send(.GET, path, token: fixture.tokens["olga"]).status == 404)
            let explanation = try await fixture.http.send(.GET, path, token: fixture.tokens["ada"]).decode(RuleExplanation.self)
            #expect(explanation.role == .writer)
            #expect(explanation.claims == ["regions": ["north"]])
            #expect(explanation.read.allowed)
            #expect(explanation.read.conditions.filter(\.decides).map(\.path) == ["read.or[1]"])
            #expect(!explanation.write.allowed)
            #expect(explanation.write.conditions.first?.bound == .condition("assignee", .eq, "bob"))
            let missing = try await fixture.http.send(.GET, "/v1/projects/field/explain?user=bob&collection=jobs", token: fixture.tokens["ada"])
            #expect(missing.status == 422)

            let claimsPath = "/v1/projects/field/members/alice/claims"
            #expect(try await fixture.http.send(.GET, claimsPath, token: fixture.tokens["bob"]).status == 403)
            let set = try await fixture.http.send(.PUT, claimsPath, token: fixture.tokens["ada"], value: ["regions": ["south"]] as JSONValue)
            #expect(set.status == 200)
            #expect(try await fixture.http.send(.GET, claimsPath, token: fixture.tokens["ada"]).decode(JSONValue.self) == ["regions": ["south"]])
            #expect(Set(try await fixture.pullAll("alice", "jobs").changes.map(\.id)) == ["j1", "j2", "j3"])
            let stranger = try await fixture.http.send(.PUT, "/v1/projects/field/members/olga/claims", token: fixture.tokens["ada"], value: [:] as JSONValue)
            #expect(stranger.status == 404)
        }
    }
}
