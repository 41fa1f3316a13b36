import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Data rules against a member who tries to get around them")
struct DataRulesHardeningTests {
    static func token(_ plain: String) -> String {
        Data(plain.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("a cursor is honoured only from the reader and for the collection it was issued to; a forged one expires")
    func forgedCursors() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            let alice = try await fixture.pullAll("alice", "jobs")
            // An unsigned cursor claiming to hold everything would list every unreadable id as gone.
            for forged in [Self.token("d1.5"), Self.token("d2.5.-"), Self.token("r2.0.5.-.-")] {
                let reply = try await fixture.pull("alice", "jobs", since: forged)
                #expect(reply.status == 410)
                #expect(reply.errorCode == "cursor_expired")
            }
            // Someone else's cursor, or one for another collection, is refused the same way.
            #expect(try await fixture.pull("bob", "jobs", since: alice.cursor).status == 410)
            #expect(try await fixture.pull("alice", "notes", since: alice.cursor).status == 410)
            // Her own still works.
            #expect(try await fixture.pull("alice", "jobs", since: alice.cursor).status == 200)
            // Readers without rules keep their unsigned cursors from before (no re-download after an upgrade).
            #expect(try await fixture.pull("alice", "notes", since: Self.token("d1.0")).status == 200)
        }
    }

    @Test("files: a bound writer cannot change, delete, search for, name or attach to what its rules hide")
    func files() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let bytes = Data("site photo".utf8)
            // ada's files: one held by carl's job in the south (hidden from bob), one by a northern job (bob reads it).
            let files = [try await fixture.upload(bytes, name: "south.jpg"), try await fixture.upload(bytes, name: "north.jpg")]
            _ = try await fixture.push("ada", [
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j2", op: .create,
                              data: ["assignee": "carl", "region": "south", "photo": .string(files[0].id)]),
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j4", op: .create,
                              data: ["assignee": "carl", "region": "north", "photo": .string(files[1].id)]),
            ])
            let path = "/v1/projects/field/files"
            let bob = fixture.tokens["bob"]
            // Hidden: as if it did not exist. Readable but not his to change: forbidden.
            #expect(try await fixture.http.send(.PATCH, "\(path)/\(files[0].id)", token: bob, json: ["public": true]).status == 404)
            #expect(try await fixture.http.send(.DELETE, "\(path)/\(files[0].id)", token: bob).status == 404)
            #expect(try await fixture.http.send(.PATCH, "\(path)/\(files[1].id)", token: bob, json: ["public": true]).status == 403)
            #expect(try await fixture.http.send(.DELETE, "\(path)/\(files[1].id)", token: bob).status == 403)
            // Searching page by page never names the hidden file, not even as the next page's key.
            var seen: [String] = []
            var after: String?
            repeat {
                let list = try await fixture.http.send(.GET, path + "?limit=1" + (after.map { "&after=\($0)" } ?? ""), token: fixture.tokens["bob"])
                    .decode(FileList.self)
                seen += list.files.map(\.id)
                if let next = list.next { #expect(next != files[0].id) }
                after = list.next
            } while after != nil
            #expect(seen == [files[1].id])
            // Naming the hidden file in his own job would let him read it: refused.
            let named = try await fixture.push("bob", [
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j9", op: .create,
                              data: ["assignee": "bob", "region": "west", "photo": .string(files[0].id)]),
            ])
            #expect(named[0].error?.code == .forbidden)
            // Attaching a new file to a job he may not write is refused before anything is stored.
            let attach = try await fixture.http.send(
                .POST, path, token: fixture.tokens["bob"],
                json: ["name": "x.jpg", "size": 1, "attachTo": ["collection": "jobs", "id": "j4", "field": "photo"]])
            #expect(attach.status == 403)
        }
    }

    @Test("a remembered operation answers only the user who sent it")
    func replays() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let operation = SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .create, data: ["assignee": "alice", "region": "north"])
            #expect(try await fixture.push("alice", [operation])[0].status == .applied)
            let again = try await fixture.push("alice", [operation])[0]
            #expect(again.status == .applied)
            let stolen = try await fixture.push("bob", [operation])[0]
            #expect(stolen.error?.code == .idempotencyMismatch)
            #expect(stolen.record == nil)
        }
    }

    @Test("long claims stay within one statement, and a claim's nulls grant nothing")
    func claimShapes() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            _ = try await fixture.push("ada", [SyncOperation(opId: newOpID(), collection: "jobs", id: "j7", op: .create, data: ["assignee": "zed"])])
            let admin = fixture.server.server.admin
            let many = (0..<999).map { JSONValue.string("r\($0)") } + ["north"]
            try await admin.setClaims(user: "bob", project: "field", ["regions": .array(many)])
            #expect(Set(try await fixture.pullAll("bob", "jobs").changes.map(\.id)) == ["j1", "j3", "j4"])
            try await admin.setClaims(user: "bob", project: "field", ["regions": .array(many + ["south"])])
            #expect(Set(try await fixture.pullAll("bob", "jobs").changes.map(\.id)) == ["j3"])  // over 1000: the claim grants nothing
            try await admin.setClaims(user: "bob", project: "field", ["regions": ["east", .null]])
            #expect(Set(try await fixture.pullAll("bob", "jobs").changes.map(\.id)) == ["j3", "j5"])  // not j7, which has no region
        }
    }

    @Test("a tombstone of a record a member never could read answers as a record that does not exist")
    func hiddenTombstones() async throws {
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            try await RulesFixture.seed(fixture)
            let carls = try await fixture.push("ada", [SyncOperation(opId: newOpID(), collection: "jobs", id: "j2", op: .delete)])
            let tombstone = try #require(carls[0].record)
            let attempts = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j2", op: .delete),
                SyncOperation(opId: newOpID(), collection: "jobs", id: "j2", op: .patch, baseVersion: tombstone.version - 1, data: ["title": "x"]),
            ])
            for result in attempts {
                #expect(result.error?.code == .notFound)
                #expect(result.current == nil && result.record == nil)
            }
            // Her own job, deleted, answers as before: she knew of it.
            #expect(try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .delete)])[0].status == .applied)
            let again = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "jobs", id: "j1", op: .delete)])[0]
            #expect(again.status == .applied)
        }
    }
}
