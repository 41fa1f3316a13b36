import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// References from the SDK: the queue uploads a referenced record before its referrers, queries follow references
/// both ways and filter on a referenced record's fields, and a cascade leaves no device with a dangling reference.
@Suite("References from the SDK: order, navigation, filters, cascades under faults", .timeLimit(.minutes(20)))
struct ReferenceClientTests {
    static let schema = Schema(collections: Fixture.schema.collections + [
        CollectionSchema(name: "sites", fields: [FieldSchema(name: "name", type: .string), FieldSchema(name: "region", type: .string)]),
        CollectionSchema(
            name: "jobs", fields: [FieldSchema(name: "title", type: .string), .reference("site", to: "sites", onDelete: .cascade)],
            conflictPolicy: .lastWriterWins),
    ])

    static func start() async throws -> Fixture {
        let fixture = try await Fixture.start()
        try await fixture.server.server.admin.setSchema(project: Fixture.project, schema)
        return fixture
    }

    @Test("offline, a job is made, then its site, then the job names the site: the queue keeps the site first, and both arrive through a faulty link")
    func targetUploadedFirst() async throws {
        let fixture = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            let proxy = try await FaultProxy.start(upstreamPort: fixture.server.port, faultRate: 0.3, seed: 11)
            try await withCleanup({ await proxy.stop() }) {
                let alice = try await fixture.client("alice") {
                    $0.serverURL = proxy.baseURL
                    $0.retry = RetryPolicy(initialDelay: .milliseconds(2), maximumDelay: .milliseconds(20), maximumAttempts: 50)
                }
                for index in 0..<20 {
                    try alice.create("jobs", id: "j-\(index)", data: ["title": .string("job \(index)")])
                    try alice.create("sites", id: "s-\(index)", data: ["name": .string("site \(index)"), "region": index.isMultiple(of: 2) ? "north" : "south"])
                    try alice.patch("jobs", id: "j-\(index)", ["site": .string("s-\(index)")])
                }
                // Combining still folds what it safely can: each job's patch waits behind its site.
                let pending = try alice.pendingOperations()
                #expect(pending.count == 60)
                var synced = false
                while !synced { synced = (try? await alice.sync()) != nil }
                #expect(try alice.failedOperations().isEmpty)
                #expect(try alice.pendingOperations().isEmpty)
                let bob = try await fixture.client("bob")
                try await bob.sync()
                #expect(try bob.count(Query("jobs").filter(.condition("site", .exists, true))) == 20)
            }
        }
    }

    @Test("related(_:via:) and referrers(of:in:via:) navigate both ways; a filter reads a referenced record's field in one query")
    func navigation() async throws {
        let fixture = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.create("sites", id: "n", data: ["name": "North", "region": "north"])
            try alice.create("sites", id: "s", data: ["name": "South", "region": "south"])
            try alice.create("jobs", id: "j1", data: ["title": "a", "site": "n"])
            try alice.create("jobs", id: "j2", data: ["title": "b", "site": "s"])
            try alice.create("jobs", id: "j3", data: ["title": "c", "site": "n"])
            try alice.create("jobs", id: "j4", data: ["title": "d"])
            #expect(try alice.related(Query("jobs").filter(.condition("title", .in, ["a", "b"])), via: "site").map(\.id) == ["n", "s"])
            #expect(try alice.referrers(of: Query("sites").filter(.condition("region", .eq, "north")), in: "jobs", via: "site").map(\.id) == ["j1", "j3"])
            #expect(try alice.records(Query("jobs").filter(.condition("site.region", .eq, "north"))).map(\.id) == ["j1", "j3"])
            #expect(try alice.records(Query("jobs").filter(.not(.condition("site.region", .eq, "north")))).map(\.id) == ["j2", "j4"])
            #expect(try alice.count(Query("jobs").filter(.condition("site.name", .like, "%uth"))) == 1)
            for bad in ["site.nope", "site.region.x", "title.x"] {
                let error = #expect(throws: CairnError.self) { _ = try alice.records(Query("jobs").filter(.condition(bad, .eq, "x"))) }
                #expect(error?.code == .validationFailed, "\(bad)")
            }
            let wrong = #expect(throws: CairnError.self) { _ = try alice.related(Query("jobs"), via: "title") }
            #expect(wrong?.code == .invalidArgument)
            // Uploaded in order: the server accepts every job.
            try await alice.sync()
            #expect(try alice.failedOperations().isEmpty)
        }
    }

    @Test("a site deleted on one device while another updates one of its jobs: after both sync, no device keeps a job naming a deleted site")
    func cascadeRacingUpdate() async throws {
        let fixture = try await Self.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            try alice.create("sites", id: "s", data: ["region": "north"])
            for index in 0..<5 { try alice.create("jobs", id: "j-\(index)", data: ["title": "t", "site": "s"]) }
            try await alice.sync()
            let bob = try await fixture.client("bob")
            try await bob.sync()
            // Both offline: alice deletes the site, bob retitles a job of it.
            try alice.delete("sites", id: "s")
            try bob.patch("jobs", id: "j-2", ["title": "changed"])
            try await alice.sync()
            try await bob.sync()
            try await alice.sync()
            for client in [alice, bob] {
                #expect(try client.record("sites", id: "s") == nil)
                let dangling = try client.records(Query("jobs").filter(.condition("site", .eq, "s")))
                #expect(dangling.isEmpty, "\(dangling.map(\.id))")
            }
            // bob's change lost to the cascade; it is in his failed list or resolved as a conflict, never applied.
            #expect(try bob.pendingOperations().isEmpty)
        }
    }
}
