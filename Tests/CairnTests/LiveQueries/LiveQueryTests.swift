@testable import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Observation
import Synchronization
import Testing

@Suite("Live queries for SwiftUI", .timeLimit(.minutes(20)))
struct LiveQueryTests {
    struct Note: Codable, Sendable, Equatable { var id: String?; var title: String }

    /// Waits until `condition` holds, with no deadline of its own (the suite's time limit is the safety net).
    static func eventually(_ condition: () -> Bool) async throws {
        try await waitUntil { condition() }
    }

    /// Counts the changes Observation reports for `read`, re-arming after each one as SwiftUI does.
    final class ChangeCounter: Sendable {
        private let changes = Mutex(0)
        var count: Int { changes.withLock { $0 } }
        func track(_ read: @escaping @Sendable () -> Void) {
            withObservationTracking(read) { [self] in
                changes.withLock { $0 += 1 }
                // Observation's onChange fires before the change lands; re-arm once it has.
                DispatchQueue.global().async { self.track(read) }
            }
        }
    }

    @Test("records, count and error follow local writes, decoded, with count ignoring the limit")
    func followsLocalWrites() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try await alice.sync()
            let live = alice.liveQuery(Query("notes").sorted(by: "title").limit(2), as: Note.self, delivery: .immediate)
            #expect(live.records.isEmpty)
            try await Self.eventually { live.isLoaded }
            for title in ["c", "a", "b"] { try alice.create("notes", id: "n-\(title)", data: ["title": .string(title)]) }
            try await Self.eventually { live.count == 3 }
            #expect(live.records == [Note(id: "n-a", title: "a"), Note(id: "n-b", title: "b")])
            #expect(live.error == nil)

            // A search field sets the query: the list follows at once.
            live.query = Query("notes").filter(.condition("title", .eq, "c"))
            try await Self.eventually { live.records.map(\.title) == ["c"] }
            #expect(live.count == 1)

            // A query of an unknown collection sets error and keeps the records.
            live.query = Query("nothing")
            try await Self.eventually { live.error != nil }
            #expect(live.error?.code == .invalidArgument)
            #expect(live.records.map(\.title) == ["c"])
        }
    }

    @Test("a list observed while another client's changes are pulled updates once per applied page")
    func oneUpdatePerPage() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let bob = try await fixture.client("bob") {
                $0.pageSize = 10
                $0.adaptsPageSize = false
            }
            try await bob.sync()
            for index in 0..<50 { try alice.create("notes", id: String(format: "n-%03d", index), data: ["title": .string("\(index)")]) }
            try await alice.sync()

            let live = bob.liveQuery(Query("notes"), as: Note.self, delivery: .immediate)
            try await Self.eventually { live.isLoaded }
            let counter = ChangeCounter()
            counter.track { _ = live.records }
            let before = live.updateCount
            let pulled = try await bob.pull(["notes"])
            #expect(pulled.pulled == 50)
            try await Self.eventually { live.records.count == 50 }
            try await Task.sleep(for: .milliseconds(200))
            // Five pages of ten, each committed in one transaction: five updates, never one per row.
            #expect(live.updateCount - before == 5)
            #expect(counter.count == 5)
        }
    }

    @Test("an unobserved live query reads nothing; after cancel no update follows")
    func noWorkUnobservedNoUpdateAfterCancel() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try await alice.sync()
            let live = alice.liveQuery(Query("notes"), as: Note.self, delivery: .immediate)
            for index in 0..<5 { try alice.create("notes", id: "n-\(index)", data: ["title": "x"]) }
            try await Task.sleep(for: .milliseconds(100))
            #expect(live.readCount == 0)

            #expect(live.records.count <= 5)
            try await Self.eventually { live.records.count == 5 }
            #expect(live.readCount >= 1)

            live.cancel()
            let (reads, updates) = (live.readCount, live.updateCount)
            for index in 5..<10 { try alice.create("notes", id: "n-\(index)", data: ["title": "x"]) }
            try await Task.sleep(for: .milliseconds(200))
            #expect(live.readCount == reads)
            #expect(live.updateCount == updates)
            #expect(live.records.count == 5 || live.records.count == 10)
        }
    }

    @Test("delivery on the main actor changes the properties on the main thread")
    func mainActorDelivery() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try await alice.sync()
            let live = alice.liveQuery(Query("notes"))
            // On Linux the main queue runs on a thread dispatch manages (Thread.isMainThread is false there): mark it.
            let mainKey = DispatchSpecificKey<Bool>()
            DispatchQueue.main.setSpecific(key: mainKey, value: true)
            let onMain = Mutex<[Bool]>([])
            @Sendable func watch() {
                withObservationTracking { _ = live.records } onChange: {
                    onMain.withLock { $0.append(DispatchQueue.getSpecific(key: mainKey) == true) }
                    DispatchQueue.global().async { watch() }
                }
            }
            watch()
            try alice.create("notes", id: "n-1", data: ["title": "x"])
            try await Self.eventually { live.records.count == 1 }
            #expect(!onMain.withLock { $0 }.isEmpty)
            #expect(onMain.withLock { $0 }.allSatisfy { $0 })
        }
    }

    @Test("the async sequence yields decoded records after each change")
    func typedSequence() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try await alice.sync()
            var iterator = alice.observe(Query("notes"), as: Note.self).makeAsyncIterator()
            #expect(try await iterator.next() == [])
            try alice.create("notes", id: "n-1", data: ["title": "first"])
            #expect(try await iterator.next() == [Note(id: "n-1", title: "first")])
        }
    }
}

@Suite("Live queries across processes", .timeLimit(.minutes(20)))
struct LiveQuerySharedStoreTests {
    @Test("a live query on one client of a store file follows another client's writes to it, and stops looking once cancelled")
    func followsOtherClients() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let path = Fixture.temporaryStorePath()
            let app = try await fixture.client("alice", store: .file(path))
            let widget = try await fixture.client("alice", store: .file(path))
            let live = app.liveQuery(Query("notes"), as: LiveQueryTests.Note.self, delivery: .immediate)
            try await LiveQueryTests.eventually { live.isLoaded }
            try widget.save("notes", id: "n-1", data: ["title": "from the widget"])
            try await LiveQueryTests.eventually { live.records.count == 1 }
            #expect(live.records == [LiveQueryTests.Note(id: "n-1", title: "from the widget")])

            live.cancel()
            let reads = live.readCount
            try widget.save("notes", id: "n-2", data: ["title": "unseen"])
            try await Task.sleep(for: .milliseconds(600))
            #expect(live.readCount == reads)
        }
    }
}
