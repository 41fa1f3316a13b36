import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Concurrent writers and a following reader")
struct ConcurrencyTests {
    @Test("a reader following the feed with a small limit sees every change exactly once, in version order")
    func gapFreeFeed() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let writers = 4, batches = 25, perBatch = 8
            let total = writers * batches * perBatch
            let done = FinishedWriters()

            let start = try await fixture.pull("rita", "notes").decode(ChangesPage.self).cursor
            async let reader: [Change] = {
                var seen: [Change] = []
                var cursor = start
                while true {
                    let writing = await done.count < writers
                    let page = try await fixture.pull("rita", "notes", since: cursor, limit: 7).decode(ChangesPage.self)
                    seen += page.changes
                    cursor = page.cursor
                    if !writing && !page.hasMore { return seen }
                }
            }()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    let user = writer % 2 == 0 ? "alice" : "bob"
                    group.addTask {
                        for batch in 0..<batches {
                            let operations = (0..<perBatch).map { index in
                                SyncOperation(opId: newOpID(), collection: "notes", id: "w\(writer)-b\(batch)-\(index)", op: .create,
                                              data: ["count": .integer(Int64(index))])
                            }
                            let results = try await fixture.push(user, operations)
                            #expect(results.allSatisfy { $0.status == .applied })
                        }
                        await done.finish()
                    }
                }
                try await group.waitForAll()
            }
            let seen = try await reader
            #expect(seen.count == total)
            #expect(Set(seen.map(\.id)).count == total)
            #expect(seen.map(\.version) == Array(1...Int64(total)))
        }
    }
}

actor FinishedWriters {
    var count = 0
    func finish() { count += 1 }
}
