import CairnProtocol
import Testing

@testable import Cairn

@Suite("Combining queued changes")
struct QueueCombinerTests {
    typealias Change = QueueCombiner.Change

    @Test("create then patch is one create; create then delete is nothing; patch then patch is one patch")
    func rules() {
        #expect(QueueCombiner.combine(nil, Change(.create, ["a": 1]), localData: ["a": 1]) == .append(Change(.create, ["a": 1])))
        #expect(QueueCombiner.combine(Change(.create, ["a": 1]), Change(.patch, ["b": 2]), localData: [:]) == .replace(Change(.create, ["a": 1, "b": 2])))
        #expect(QueueCombiner.combine(Change(.create, ["a": 1]), Change(.patch, ["a": nil]), localData: [:]) == .replace(Change(.create, [:])))
        #expect(QueueCombiner.combine(Change(.create, ["a": 1]), Change(.delete), localData: [:]) == .remove)
        #expect(QueueCombiner.combine(Change(.create, ["a": 1]), Change(.update, ["c": 3]), localData: [:]) == .replace(Change(.create, ["c": 3])))
        #expect(QueueCombiner.combine(Change(.patch, ["a": 1]), Change(.patch, ["b": nil]), localData: [:]) == .replace(Change(.patch, ["a": 1, "b": nil])))
        #expect(QueueCombiner.combine(Change(.patch, ["o": ["x": 1]]), Change(.patch, ["o": ["y": 2]]), localData: [:]) == .replace(Change(.patch, ["o": ["x": 1, "y": 2]])))
        #expect(QueueCombiner.combine(Change(.update, ["a": 1]), Change(.patch, ["b": 2]), localData: [:]) == .replace(Change(.update, ["a": 1, "b": 2])))
        #expect(QueueCombiner.combine(Change(.patch, ["a": 1]), Change(.update, ["z": 0]), localData: [:]) == .replace(Change(.update, ["z": 0])))
        #expect(QueueCombiner.combine(Change(.patch, ["a": 1]), Change(.delete), localData: [:]) == .replace(Change(.delete)))
        #expect(QueueCombiner.combine(Change(.update, ["a": 1]), Change(.delete), localData: [:]) == .replace(Change(.delete)))
        #expect(QueueCombiner.combine(Change(.delete), Change(.create, ["n": 1]), localData: ["n": 1]) == .replace(Change(.update, ["n": 1])))
    }

    @Test("two patches that no single patch can express become an update of the local data")
    func inexactComposition() {
        // The first patch removes `o`, the second merges into the removed member.
        let outcome = QueueCombiner.combine(Change(.patch, ["o": nil]), Change(.patch, ["o": ["y": 1]]), localData: ["o": ["y": 1], "k": 2])
        #expect(outcome == .replace(Change(.update, ["o": ["y": 1], "k": 2])))
        let scalar = QueueCombiner.combine(Change(.patch, ["o": 5]), Change(.patch, ["o": ["y": 1]]), localData: ["o": ["y": 1]])
        #expect(scalar == .replace(Change(.update, ["o": ["y": 1]])))
    }

    @Test("changes fold into each other only within one change set, or outside any, and never after an upload began")
    func changeSetEdges() {
        #expect(QueueCombiner.mayCombine(queuedAttempts: 0, queuedChangeSet: nil, newChangeSet: nil))
        #expect(QueueCombiner.mayCombine(queuedAttempts: 0, queuedChangeSet: "s1", newChangeSet: "s1"))
        #expect(!QueueCombiner.mayCombine(queuedAttempts: 0, queuedChangeSet: "s1", newChangeSet: nil))
        #expect(!QueueCombiner.mayCombine(queuedAttempts: 0, queuedChangeSet: nil, newChangeSet: "s1"))
        #expect(!QueueCombiner.mayCombine(queuedAttempts: 0, queuedChangeSet: "s1", newChangeSet: "s2"))
        #expect(!QueueCombiner.mayCombine(queuedAttempts: 1, queuedChangeSet: "s1", newChangeSet: "s1"))
    }

    static let patchPairs: [(JSONValue, JSONValue)] = [
        (["o": ["x": 1]], ["o": ["y": nil]]),
        (["a": 1, "b": ["c": 2]], ["b": ["c": nil, "d": 3], "a": nil]),
        (["a": ["b": ["c": 1]]], ["a": ["b": ["d": 2]]]),
    ]

    @Test("combined patches have the same effect as applying both, on any document", arguments: patchPairs)
    func compositionIsExact(first: JSONValue, second: JSONValue) throws {
        let documents: [JSONValue] = [[:], ["o": "s", "a": 7], ["o": ["x": 0, "z": 9], "b": ["c": 1, "e": 5]], ["a": ["b": 3]]]
        guard case .replace(let change) = QueueCombiner.combine(Change(.patch, first.objectValue), Change(.patch, second.objectValue), localData: [:]),
            change.kind == .patch
        else { Issue.record("expected a composed patch"); return }
        for document in documents {
            let sequential = document.merging(patch: first).merging(patch: second)
            #expect(document.merging(patch: .object(change.data ?? [:])) == sequential, "\(document)")
        }
    }
}

@Suite("Retry backoff")
struct RetryPolicyTests {
    @Test("delays grow exponentially, stay capped, and jitter stays within bounds")
    func backoff() {
        let policy = RetryPolicy(initialDelay: .milliseconds(100), maximumDelay: .seconds(2), maximumAttempts: 6, jitter: 0.5)
        #expect(policy.delay(beforeAttempt: 1, unit: 0.5) == .zero)
        #expect(policy.delay(beforeAttempt: 2, unit: 0.5) == .milliseconds(100))
        #expect(policy.delay(beforeAttempt: 3, unit: 0.5) == .milliseconds(200))
        #expect(policy.delay(beforeAttempt: 5, unit: 0.5) == .milliseconds(800))
        #expect(policy.delay(beforeAttempt: 30, unit: 0.5) == .seconds(2))
        #expect(policy.delay(beforeAttempt: 3, unit: 0) == .milliseconds(100))
        #expect(policy.delay(beforeAttempt: 3, unit: 1) == .milliseconds(300))
        #expect(policy.delay(beforeAttempt: 30, unit: 1) == .seconds(2))
        #expect(policy.shouldRetry(after: 5))
        #expect(!policy.shouldRetry(after: 6))
    }
}

@Suite("Three-way merge")
struct ThreeWayMergeTests {
    func conflict(base: [String: JSONValue]?, local: [String: JSONValue]?, server: [String: JSONValue]?) -> Conflict {
        Conflict(collection: "notes", id: "n", base: base, local: local, server: server, serverVersion: 9)
    }

    @Test("fields changed on one side merge; fields changed on both fall back to the chosen side")
    func merge() {
        let c = conflict(base: ["a": 1, "b": 1, "c": 1, "d": 1], local: ["a": 2, "b": 1, "c": 5, "e": 1], server: ["a": 1, "b": 3, "c": 6, "d": 1])
        #expect(ConflictResolver.threeWayMerge(c, fallback: .server) == .data(["a": 2, "b": 3, "c": 6, "e": 1]))
        #expect(ConflictResolver.threeWayMerge(c, fallback: .client) == .data(["a": 2, "b": 3, "c": 5, "e": 1]))
        let same = conflict(base: ["a": 1], local: ["a": 1], server: ["a": 2])
        #expect(ConflictResolver.threeWayMerge(same, fallback: .client) == .server)
    }

    @Test("a delete against an edit takes the fallback side")
    func deletes() {
        let localDelete = conflict(base: ["a": 1], local: nil, server: ["a": 2])
        #expect(ConflictResolver.threeWayMerge(localDelete, fallback: .server) == .server)
        #expect(ConflictResolver.threeWayMerge(localDelete, fallback: .client) == .delete)
        let serverDelete = conflict(base: ["a": 1], local: ["a": 2], server: nil)
        #expect(ConflictResolver.threeWayMerge(serverDelete, fallback: .server) == .server)
        #expect(ConflictResolver.threeWayMerge(serverDelete, fallback: .client) == .client)
    }
}
