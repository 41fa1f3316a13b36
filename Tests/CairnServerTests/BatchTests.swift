import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("The batch endpoint")
struct BatchTests {
    func op(_ kind: OperationKind, _ collection: String, _ id: String, base: Int64? = nil, _ data: [String: JSONValue]? = nil,
            opId: String = newOpID()) -> SyncOperation {
        SyncOperation(opId: opId, collection: collection, id: id, op: kind, baseVersion: base, data: data)
    }

    @Test("create, update, patch and delete, each at a new project-wide version")
    func lifecycle() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let created = try await fixture.push("alice", [
                op(.create, "notes", "n1", ["title": "Buy milk", "done": false, "tags": ["home", 2], "due": "2026-11-22T10:00:00+01:00"]),
                op(.create, "tasks", "t1", ["title": "Call", "extra": ["nested": [1, 2.5, nil]]]),
            ])
            #expect(created.map(\.status) == [.applied, .applied])
            let n1 = try #require(created[0].record)
            #expect(n1.version == 1)
            #expect(created[1].record?.version == 2)
            #expect(n1.updatedBy == "alice")
            #expect(created[1].record?.data["extra"] == ["nested": [1, 2.5, nil]])

            let patched = try await fixture.push("bob", [op(.patch, "notes", "n1", base: 1, ["done": true, "tags": nil])])
            #expect(patched[0].status == .applied)
            #expect(patched[0].record?.data == ["title": "Buy milk", "done": true, "due": "2026-11-22T10:00:00+01:00"])
            #expect(patched[0].record?.version == 3)

            let updated = try await fixture.push("bob", [op(.update, "notes", "n1", base: 3, ["title": "Only title"])])
            #expect(updated[0].record?.data == ["title": "Only title"])

            let deleted = try await fixture.push("alice", [op(.delete, "notes", "n1", base: 4)])
            #expect(deleted[0].status == .applied)
            #expect(deleted[0].record?.deleted == true)
            #expect(deleted[0].record?.version == 5)
            // Deleting a tombstone again is applied and changes nothing.
            let again = try await fixture.push("alice", [op(.delete, "notes", "n1")])
            #expect(again[0].status == .applied)
            #expect(again[0].record?.version == 5)
            // A create on a tombstone brings the record back; a create on a live record is a conflict.
            let revived = try await fixture.push("alice", [op(.create, "notes", "n1", ["title": "Back"])])
            #expect(revived[0].record?.version == 6)
            let duplicate = try await fixture.push("bob", [op(.create, "notes", "n1", ["title": "Dup"])])
            #expect(duplicate[0].status == .conflict)
            #expect(duplicate[0].current?.data == ["title": "Back"])
            let missing = try await fixture.push("bob", [op(.patch, "notes", "nope", ["title": "x"]), op(.delete, "tasks", "nope")])
            #expect(missing.map(\.error?.code) == [.notFound, .notFound])
        }
    }

    @Test("reject policy: a stale baseVersion is a conflict carrying the current state")
    func rejectPolicy() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", [op(.create, "tasks", "t1", ["title": "a", "rank": 1])])
            _ = try await fixture.push("alice", [op(.patch, "tasks", "t1", base: 1, ["title": "b"])])
            let stale = try await fixture.push("bob", [op(.patch, "tasks", "t1", base: 1, ["rank": 2])])
            #expect(stale[0].status == .conflict)
            #expect(stale[0].current?.version == 2)
            #expect(stale[0].current?.data == ["title": "b", "rank": 1])
            let staleDelete = try await fixture.push("bob", [op(.delete, "tasks", "t1", base: 1)])
            #expect(staleDelete[0].status == .conflict)
            let unconditional = try await fixture.push("bob", [op(.patch, "tasks", "t1", ["rank": 3])])
            #expect(unconditional[0].status == .applied)
            let fresh = try await fixture.push("bob", [op(.patch, "tasks", "t1", base: 3, ["rank": 4])])
            #expect(fresh[0].status == .applied)
        }
    }

    @Test("merge-fields policy: disjoint fields merge, the same field conflicts")
    func mergeFieldsPolicy() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", [op(.create, "notes", "n1", ["title": "a", "done": false, "count": 1])])
            _ = try await fixture.push("alice", [op(.patch, "notes", "n1", base: 1, ["title": "alice's"])])
            let disjoint = try await fixture.push("bob", [op(.patch, "notes", "n1", base: 1, ["done": true])])
            #expect(disjoint[0].status == .applied)
            #expect(disjoint[0].record?.data == ["title": "alice's", "done": true, "count": 1])
            let same = try await fixture.push("bob", [op(.patch, "notes", "n1", base: 1, ["title": "bob's"])])
            #expect(same[0].status == .conflict)
            #expect(same[0].current?.data["title"] == "alice's")
            // An update touches only the fields whose values it changes.
            let update = try await fixture.push("bob", [op(.update, "notes", "n1", base: 1, ["title": "alice's", "done": true, "count": 5])])
            #expect(update[0].status == .applied)
            let updateTitle = try await fixture.push("bob", [op(.update, "notes", "n1", base: 1, ["title": "x", "done": true, "count": 5])])
            #expect(updateTitle[0].status == .conflict)
            // A stale delete touches every field.
            let delete = try await fixture.push("bob", [op(.delete, "notes", "n1", base: 1)])
            #expect(delete[0].status == .conflict)
        }
    }

    @Test("last-writer-wins policy: stale writes apply")
    func lastWriterWins() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", [op(.create, "logs", "l1", ["message": "a"])])
            _ = try await fixture.push("alice", [op(.patch, "logs", "l1", base: 1, ["message": "b"])])
            let stale = try await fixture.push("bob", [op(.patch, "logs", "l1", base: 1, ["message": "c"])])
            #expect(stale[0].status == .applied)
            #expect(stale[0].record?.data == ["message": "c"])
            let staleDelete = try await fixture.push("bob", [op(.delete, "logs", "l1", base: 1)])
            #expect(staleDelete[0].status == .applied)
        }
    }

    @Test("idempotency: a replayed opId returns the original result and changes nothing")
    func idempotency() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let create = op(.create, "notes", "n1", ["title": "once"], opId: "op-create-1")
            let first = try await fixture.push("alice", [create])
            let second = try await fixture.push("alice", [create])
            #expect(first == second)
            let page = try await fixture.pullAll("alice", "notes")
            #expect(page.changes.count == 1)
            #expect(page.changes[0].version == 1)
            // Replays also hold for conflicts, and within one batch.
            let conflict = op(.create, "notes", "n1", ["title": "twice"], opId: "op-create-2")
            let results = try await fixture.push("bob", [conflict, conflict])
            #expect(results.map(\.status) == [.conflict, .conflict])
            let mismatch = try await fixture.push("alice", [op(.create, "notes", "n2", ["title": "other"], opId: "op-create-1")])
            #expect(mismatch[0].status == .rejected)
            #expect(mismatch[0].error?.code == .idempotencyMismatch)
            #expect(try await fixture.pullAll("alice", "notes").changes.count == 1)
        }
    }

    @Test("replays answer the very bytes of the first answer, after the record moved on, for every kind of write")
    func byteIdenticalReplays() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = "/v1/projects/\(Fixture.project)/batch"
            let writes = [
                op(.create, "notes", "r1", ["title": "first", "done": false, "tags": ["a", "é\n\u{1F600}"]], opId: "replay-create"),
                op(.create, "notes", "r2", ["title": "with a null", "count": nil], opId: "replay-create-null"),
                op(.update, "notes", "r1", base: 1, ["title": "second", "due": "2026-11-22T10:00:00.125Z"], opId: "replay-update"),
                op(.patch, "notes", "r1", base: 3, ["done": true], opId: "replay-patch"),
            ]
            var answers: [[UInt8]] = []
            for write in writes {
                let reply = try await fixture.http.send(.POST, path, token: fixture.tokens["alice"], value: BatchRequest(operations: [write]))
                #expect(reply.status == 200)
                answers.append(Array(reply.body))
            }
            _ = try await fixture.push("bob", [op(.update, "notes", "r1", ["title": "moved on"]), op(.delete, "notes", "r2")])
            for (write, answer) in zip(writes, answers) {
                let again = try await fixture.http.send(.POST, path, token: fixture.tokens["alice"], value: BatchRequest(operations: [write]))
                #expect(Array(again.body) == answer, "replay of \(write.opId)")
            }
            let first = try CairnJSON.decode(BatchResponse.self, from: answers[0]).results[0]
            #expect(first.record?.data == ["title": "first", "done": false, "tags": ["a", "é\n\u{1F600}"]])
            #expect(try CairnJSON.decode(BatchResponse.self, from: answers[1]).results[0].record?.data == ["title": "with a null"])
        }
    }

    @Test("opIds are told apart by their exact bytes: equivalent Unicode spellings are different (invalid) opIds")
    func opIdBytes() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let composed = op(.create, "notes", "u1", ["title": "a"], opId: "caf\u{E9}")
            let decomposed = op(.create, "notes", "u1", ["title": "b"], opId: "cafe\u{301}")
            #expect(Array(composed.opId.utf8) != Array(decomposed.opId.utf8))
            // Both orders, the second time as replays of the first.
            for batch in [[composed, decomposed], [decomposed, composed]] {
                let results = try await fixture.push("alice", batch)
                #expect(results.map(\.status) == [.rejected, .rejected])
                #expect(results.map { $0.error?.code } == [.validationFailed, .validationFailed])
                #expect(results.map { Array($0.opId.utf8) } == batch.map { Array($0.opId.utf8) })
            }
        }
    }

    @Test("invalid opIds (empty, control characters, NUL) are rejected every time, never remembered, never a 500")
    func invalidOpIDsAreNotRemembered() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            for opId in ["", "\u{0}", "a\u{0}b", "\u{1}x"] {
                // Twice in one batch and again in a second one: each answer is about the opId, not a replay.
                for _ in 0..<2 {
                    let batch = [op(.create, "notes", "v1", ["title": "a"], opId: opId), op(.create, "notes", "v2", ["title": "b"], opId: opId)]
                    let results = try await fixture.push("alice", batch)
                    #expect(results.map(\.status) == [.rejected, .rejected], "\(Array(opId.utf8))")
                    #expect(results.map { $0.error?.code } == [.validationFailed, .validationFailed], "\(Array(opId.utf8))")
                }
            }
            #expect(try await fixture.pullAll("alice", "notes").changes.isEmpty)
        }
    }

    @Test("atomic batches apply all or nothing, and say why for each operation")
    func atomic() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let good = op(.create, "notes", "a1", ["title": "ok"])
            let bad = op(.create, "notes", "a2", ["title": 42])
            let results = try await fixture.push("alice", [good, bad, op(.create, "notes", "a3", ["title": "ok"])], atomic: true)
            #expect(results.map(\.status) == [.rejected, .rejected, .rejected])
            #expect(results[0].error?.code == .batchAborted)
            #expect(results[1].error?.code == .validationFailed)
            #expect(results[2].error?.code == .batchAborted)
            #expect(try await fixture.pullAll("alice", "notes").changes.isEmpty)
            // Nothing was remembered: the same opId can apply once the batch is fixed.
            let retry = try await fixture.push("alice", [good, op(.create, "notes", "a2", ["title": "fixed"])], atomic: true)
            #expect(retry.map(\.status) == [.applied, .applied])
            #expect(retry.map { $0.record?.version } == [1, 2])
            // Non-atomic: the good operations apply and the bad one is rejected alone.
            let mixed = try await fixture.push("alice", [op(.create, "notes", "b1", ["title": "ok"]), op(.create, "notes", "b2", ["done": "no"])])
            #expect(mixed.map(\.status) == [.applied, .rejected])
        }
    }

    static let badValues: [(String, JSONValue)] = [
        ("title", .integer(1)), ("done", "yes"), ("due", "yesterday"), ("due", "2026-13-01T00:00:00Z"), ("count", 1.5),
        ("count", "1"), ("score", true), ("photo", "bad id with spaces"), ("title", ["a"]),
    ]

    @Test("data is validated against the schema's field types", arguments: badValues)
    func validation(field: String, value: JSONValue) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let results = try await fixture.push("alice", [op(.create, "notes", "n1", [field: value])])
            #expect(results[0].status == .rejected)
            #expect(results[0].error?.code == .validationFailed)
            #expect(results[0].error?.details?["field"] == .string(field))
            #expect(try await fixture.pullAll("alice", "notes").changes.isEmpty)
        }
    }

    @Test("good values of every type are accepted, and unlisted fields sync")
    func acceptedValues() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            // A file field takes the id of a completed file of the project.
            let photo = try await fixture.upload(testBytes(10)).id
            let data: [String: JSONValue] = [
                "title": "t", "done": true, "due": "2026-11-22T10:00:00.123456Z", "photo": .string(photo), "count": 9_007_199_254_740_993,
                "score": 2.5, "tags": ["a": [1, nil, true]], "unlisted": ["any": "thing"], "nullable": nil,
            ]
            let results = try await fixture.push("alice", [op(.create, "notes", "n1", data)])
            #expect(results[0].status == .applied)
            var expected = data
            expected["nullable"] = nil
            #expect(results[0].record?.data == expected)
            let pulled = try await fixture.pullAll("alice", "notes").changes
            #expect(pulled.first?.data == expected)
        }
    }

    @Test("bad operations are rejected one by one, never a 500", arguments: [
        #"{"opId": "o1", "collection": "nosuch", "id": "x", "op": "create", "data": {}}"#,
        #"{"opId": "o1", "collection": "notes", "id": "bad id!", "op": "create", "data": {}}"#,
        #"{"opId": "", "collection": "notes", "id": "x", "op": "create", "data": {}}"#,
        #"{"opId": "o1", "collection": "notes", "id": "x", "op": "create"}"#,
        #"{"opId": "o1", "collection": "notes", "id": "x", "op": "delete", "data": {"a": 1}}"#,
    ])
    func badOperations(json: String) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let reply = try await fixture.http.send(.POST, "/v1/projects/field/batch", token: fixture.tokens["alice"],
                                                    body: Data(#"{"operations": [\#(json)]}"#.utf8))
            #expect(reply.status == 200)
            let results = try reply.decode(BatchResponse.self).results
            #expect(results.first?.status == .rejected)
            #expect(results.first?.error?.code == .validationFailed)
        }
    }

    @Test("bad bodies get 4xx codes, never a 500, and store nothing", arguments: [
        ("{not json", 400, "bad_request"), ("", 400, "bad_request"), ("[]", 422, "validation_failed"),
        (#"{"operations": 5}"#, 422, "validation_failed"), (#"{"operations": [{"op": "create"}]}"#, 422, "validation_failed"),
        (#"{"operations": [{"opId": "a", "collection": "notes", "id": "x", "op": "explode"}]}"#, 422, "validation_failed"),
        (#"{"operations": [{"opId": "a", "collection": "notes", "id": "x", "op": "create", "data": [1]}]}"#, 422, "validation_failed"),
        (#"{"operations": [{"opId": "a", "collection": "notes", "id": "x", "op": "patch", "baseVersion": "1", "data": {}}]}"#, 422, "validation_failed"),
        (String(repeating: "[", count: 10_000), 400, "bad_request"),
    ])
    func badBodies(body: String, status: Int, code: String) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let reply = try await fixture.http.send(.POST, "/v1/projects/field/batch", token: fixture.tokens["alice"], body: Data(body.utf8))
            #expect(reply.status == status)
            #expect(reply.errorCode == code)
            #expect(try await fixture.pullAll("alice", "notes").changes.isEmpty)
        }
    }

    @Test("limits: more than 1000 operations or more than 10 MB is 413")
    func limits() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let many = (0..<1001).map { op(.create, "notes", "n\($0)", ["title": "x"]) }
            let tooMany = try await fixture.http.send(.POST, "/v1/projects/field/batch", token: fixture.tokens["alice"],
                                                      value: BatchRequest(operations: many))
            #expect(tooMany.status == 413)
            #expect(tooMany.errorCode == "payload_too_large")
            let big = String(repeating: "x", count: 11 * 1024 * 1024)
            let tooBig = try await fixture.http.send(.POST, "/v1/projects/field/batch", token: fixture.tokens["alice"],
                                                     value: BatchRequest(operations: [op(.create, "notes", "big", ["title": .string(big)])]))
            #expect(tooBig.status == 413)
            #expect(try await fixture.pullAll("alice", "notes").changes.isEmpty)
            let exactly = try await fixture.push("alice", Array(many.prefix(1000)))
            #expect(exactly.allSatisfy { $0.status == .applied })
        }
    }

    @Test("Prefer: return=minimal leaves out only the data of writes committed exactly as sent, results=positional their opId too")
    func minimalAnswers() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", [op(.create, "notes", "n0", ["title": "there", "done": false])])
            let operations = [
                op(.create, "notes", "n1", ["title": "as sent", "done": false]),
                op(.create, "notes", "n2", ["title": "with a null", "done": nil]),
                op(.patch, "notes", "n0", base: 1, ["done": true]),
                op(.create, "notes", "n0", ["title": "taken"]),
            ]
            func send(_ prefer: String?) async throws -> HTTPReply {
                try await fixture.http.send(
                    .POST, "/v1/projects/\(Fixture.project)/batch", token: fixture.tokens["alice"],
                    body: CairnJSON.encode(BatchRequest(operations: operations)), headers: prefer.map { ["Prefer": $0] } ?? [:])
            }
            let minimal = try await send("respond-async, RETURN=\"minimal\"")
            #expect(minimal.status == 200)
            #expect(minimal.header("Preference-Applied") == "return=minimal")
            let results = try #require(minimal.json?["results"]?.arrayValue)
            // The create sent without nulls: its envelope only. The one with a null (committed without it), the patch
            // (merged) and the conflict (the current state): whole.
            #expect(results[0]["record"]?["data"] == nil)
            #expect(results[0]["record"]?["version"] == 2)
            // An SDK that predates results=positional matches results by opId: it keeps getting them.
            #expect(results.allSatisfy { $0["opId"] != nil })
            #expect(results[1]["record"]?["data"] == ["title": "with a null"])
            #expect(results[2]["record"]?["data"] == ["title": "there", "done": true])
            #expect(results[3]["current"]?["data"] == ["title": "there", "done": true])

            // A replay answers whole; without the preference every applied result carries its data.
            let replay = try await send(nil)
            #expect(replay.header("Preference-Applied") == nil)
            let replayed = try #require(replay.json?["results"]?.arrayValue)
            #expect(replayed[0]["record"]?["data"] == ["title": "as sent", "done": false])
            let other = try await send("return=representation")
            #expect(other.header("Preference-Applied") == nil)
            #expect(other.json?["results"]?.arrayValue?.first?["record"]?["data"] == ["title": "as sent", "done": false])

            // results=positional beside it: a write committed as sent is answered by its place, without its opId.
            let fresh = [op(.create, "notes", "p1", ["title": "as sent"]), op(.create, "notes", "n0", ["title": "taken"])]
            let positional = try await fixture.http.send(
                .POST, "/v1/projects/\(Fixture.project)/batch", token: fixture.tokens["alice"],
                body: CairnJSON.encode(BatchRequest(operations: fresh)), headers: ["Prefer": "return=minimal, results=positional"])
            #expect(positional.header("Preference-Applied") == "return=minimal, results=positional")
            let answered = try #require(positional.json?["results"]?.arrayValue)
            #expect(answered[0] == ["status": "applied", "record": answered[0]["record"]!])
            #expect(answered[0]["record"]?["data"] == nil && answered[0]["record"]?["id"] == "p1")
            #expect(answered[1]["opId"]?.stringValue == fresh[1].opId && answered[1]["status"] == "conflict")
        }
    }
}
