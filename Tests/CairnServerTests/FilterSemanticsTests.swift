import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// PROTOCOL.md's filter semantics, evaluated by the server's SQL over real records.
@Suite("Filter semantics on the server")
struct FilterSemanticsTests {
    static let records: [String: [String: JSONValue]] = [
        "r1": ["title": "Buy MILK", "done": false, "count": 1, "score": 1.5, "due": "2026-11-22T10:00:00Z", "tags": ["home", 3]],
        "r2": ["title": "walk", "done": true, "count": 2, "score": 2, "due": "2026-11-22T10:30:00+01:00", "tags": ["work"]],
        "r3": ["title": "milkshake", "count": 3, "due": "2026-12-01T00:00:00Z"],
        "r4": ["title": nil, "done": nil, "tags": "home"],
    ]

    static let cases: [(Filter, [String])] = [
        (.condition("done", .eq, false), ["r1"]),
        (.condition("done", .ne, false), ["r2", "r3", "r4"]),
        (.condition("done", .eq, nil), ["r3", "r4"]),
        (.condition("done", .ne, nil), ["r1", "r2"]),
        (.condition("count", .eq, 1.0), ["r1"]),
        (.condition("score", .eq, 2), ["r2"]),
        (.condition("count", .gt, 1), ["r2", "r3"]),
        (.condition("count", .lte, 2), ["r1", "r2"]),
        (.condition("score", .lt, 100), ["r1", "r2"]),
        (.condition("title", .like, "%milk%"), ["r1", "r3"]),
        (.condition("title", .like, "wal_"), ["r2"]),
        (.condition("title", .gt, "a"), ["r2", "r3"]),
        (.condition("due", .lt, "2026-11-22T10:00:00Z"), ["r2"]),
        (.condition("due", .eq, "2026-11-22T11:00:00+01:00"), ["r1"]),
        (.condition("due", .gte, "2026-11-22T10:00:00Z"), ["r1", "r3"]),
        (.condition("count", .in, [1, 3]), ["r1", "r3"]),
        (.condition("count", .in, []), []),
        (.condition("done", .in, [true, nil]), ["r2", "r3", "r4"]),
        (.condition("tags", .contains, "home"), ["r1"]),
        (.condition("tags", .contains, 3), ["r1"]),
        (.condition("title", .exists, true), ["r1", "r2", "r3"]),
        (.condition("done", .exists, false), ["r3", "r4"]),
        (.condition("id", .in, ["r2", "r4"]), ["r2", "r4"]),
        (.and([]), ["r1", "r2", "r3", "r4"]),
        (.or([]), []),
        (.and([.condition("count", .gte, 1), .or([.condition("done", .eq, true), .condition("title", .like, "MILK%")])]), ["r2", "r3"]),
    ]

    @Test("each operator matches what PROTOCOL.md says")
    func semantics() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", Self.records.map { SyncOperation(opId: newOpID(), collection: "notes", id: $0.key, op: .create, data: $0.value) })
            for (filter, expected) in Self.cases {
                let ids = try await fixture.pullAll("rita", "notes", filter: filter).changes.map(\.id).sorted()
                #expect(ids == expected, "\(filter)")
            }
        }
    }
}
