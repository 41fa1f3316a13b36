import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// `own=`: a pull of changes leaves out the states committed at the versions the caller names (its own accepted
/// writes), never a state anyone else committed, never a `gone`, never a snapshot's record.
@Suite("The changes feed without the caller's own writes")
struct OwnWritesFeedTests {
    func create(_ id: String, _ data: [String: JSONValue]) -> SyncOperation {
        SyncOperation(opId: newOpID(), collection: "notes", id: id, op: .create, data: data)
    }

    func patch(_ id: String, _ data: [String: JSONValue]) -> SyncOperation {
        SyncOperation(opId: newOpID(), collection: "notes", id: id, op: .patch, data: data)
    }

    /// The versions of applied results, as `own=` text.
    func own(_ results: [OperationResult]) -> String {
        var ranges = VersionRanges()
        for result in results where result.status == .applied {
            if let version = result.record?.version { ranges.insert(version...version) }
        }
        return ranges.text
    }

    @Test("the caller's own states stay out; a later write by anyone else to the same record comes whole")
    func ownStatesLeftOut() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let start = try await fixture.pullAll("alice", "notes").cursor
            let mine = try await fixture.push("alice", (1...30).map { create("n\($0)", ["count": .integer(Int64($0))]) })
            let others = try await fixture.push("bob", [create("b1", ["count": 1])])
            // bob changes n5 after alice wrote it: that state is bob's, and comes.
            _ = try await fixture.push("bob", [patch("n5", ["done": true])])
            let pulled = try await fixture.pullAll("alice", "notes", since: start, limit: 7, own: own(mine))
            #expect(pulled.changes.map(\.id) == ["b1", "n5"])
            #expect(pulled.changes[1].data?["done"] == true && pulled.changes[1].updatedBy == "bob")
            // Without own=, everything comes, as before.
            let everything = try await fixture.pullAll("alice", "notes", since: start)
            #expect(everything.changes.count == 31)
            // The cursors of both end at the same place: nothing is pulled twice, nothing is missed.
            let after = try await fixture.pull("alice", "notes", since: pulled.cursor).decode(ChangesPage.self)
            #expect(after.changes.isEmpty)
            #expect(own(others) != own(mine))
        }
    }

    @Test("an own delete's tombstone stays out; a record that left the where filter still comes as gone")
    func tombstonesAndGone() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let filter = Filter.condition("count", .lt, 100)
            _ = try await fixture.push("alice", [create("n1", ["count": 1]), create("n2", ["count": 2])])
            let start = try await fixture.pullAll("alice", "notes", filter: filter).cursor
            let mine = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .delete), patch("n2", ["count": 500]),
            ])
            let pulled = try await fixture.pullAll("alice", "notes", since: start, filter: filter, own: own(mine))
            #expect(pulled.changes.map(\.id) == ["n2"])
            #expect(pulled.changes.first?.gone == true)
        }
    }

    @Test("a snapshot lists the caller's own records too: own= applies to changes after a cursor only")
    func snapshotsListEverything() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let mine = try await fixture.push("alice", (1...12).map { create("n\($0)", ["count": .integer(Int64($0))]) })
            let snapshot = try await fixture.pullAll("alice", "notes", limit: 5, own: own(mine))
            #expect(snapshot.changes.count == 12)
        }
    }

    @Test("own= that is not a list of versions is refused, naming the parameter")
    func malformedOwn() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let start = try await fixture.pullAll("alice", "notes").cursor
            for bad in ["", "a", "5-3", "0", "-4", "1,,2", (1...300).map(String.init).joined(separator: ",")] {
                let reply = try await fixture.pull("alice", "notes", since: start, own: bad)
                #expect(reply.status == 422, "own=\(bad.prefix(20))")
                #expect(reply.json?["error"]?["details"]?["field"]?.stringValue == "own")
            }
            #expect(try await fixture.pull("alice", "notes", since: start, own: "1-3,7").status == 200)
        }
    }

    @Test("a changes page tells in Server-Timing how long the server took to read it")
    func serverTiming() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let reply = try await fixture.pull("alice", "notes")
            let value = try #require(reply.headers.first(name: "Server-Timing"))
            #expect(ServerTiming.milliseconds(CairnHeader.feedTimingMetric, in: value) != nil, "\(value)")
        }
    }
}
