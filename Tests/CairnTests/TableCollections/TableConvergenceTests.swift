import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import NIOCore
import PostgresNIO
import Testing

/// Random SQL sessions (inserts, updates, deletes, COPY, rollbacks) and random devices write the same rows at once;
/// every device converges to the table, a cursor sees every change once, and the data rules hold.
@Suite("Collections in PostgreSQL tables: SQL and devices at once", .timeLimit(.minutes(20)))
struct TableConvergenceTests {
    static let regions: [JSONValue] = ["north", "south"]
    static let schema = Schema(collections: [CollectionSchema(
        name: "items",
        fields: [
            FieldSchema(name: "region", type: .string), FieldSchema(name: "a", type: .string), FieldSchema(name: "b", type: .integer),
            FieldSchema(name: "c", type: .boolean),
        ],
        conflictPolicy: .mergeFields,
        rules: DataRules(read: .condition("region", .in, RuleParameter.claim("regions").value)),
        table: "erp.items")])
    static let columns = ["region", "a", "b", "c"]

    @Test("random SQL sessions and devices converge on the table's contents", arguments: [11, 29, 47] as [UInt64])
    func converge(seed: UInt64) async throws {
        guard TableHarness.available("the table convergence test") else { return }
        try await TableHarness.with(schema: Self.schema) { harness in
            let admin = harness.server.server.admin
            for user in ["alice", "bob"] { try await admin.setClaims(user: user, project: TableHarness.project, ["regions": ["north", "south"]]) }
            try await admin.setClaims(user: "carl", project: TableHarness.project, ["regions": ["north"]])
            // The follower reads as an admin, whom the rules do not bind: its cursor sees every change.
            try await admin.addUser("dave", password: TestServer.password)
            try await admin.grant(user: "dave", project: TableHarness.project, role: .admin)
            let devices = [try await harness.client("alice"), try await harness.client("bob"), try await harness.client("carl")]
            let follower = Follower(harness: harness)
            var random = SeededGenerator(seed: seed)
            for round in 0..<5 {
                let sessionSeeds = (0..<3).map { _ in random.next() }
                let deviceSeeds = devices.map { _ in random.next() }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (session, sessionSeed) in sessionSeeds.enumerated() {
                        group.addTask { try await Self.sqlSession(harness, seed: sessionSeed, name: "r\(round)s\(session)") }
                    }
                    for (index, (device, deviceSeed)) in zip(devices, deviceSeeds).enumerated() {
                        // carl creates only what he may read (a record he cannot read stays on the device that wrote it,
                        // in any collection: the feed never sent it).
                        let regions = index == 2 ? ["north"] : ["north", "south"]
                        group.addTask { try await Self.deviceRound(device, seed: deviceSeed, name: "r\(round)", regions: regions) }
                    }
                    group.addTask { try await follower.follow() }
                    try await group.waitForAll()
                }
            }
            // Quiet now: everyone uploads what is left. A write the server refused stays on its device for the app to
            // retry or discard (here: discarded, so the record shows the server's state again); under the read rule
            // only carl, who may not write what he cannot read, meets `forbidden`.
            for device in devices { _ = try await device.sync() }
            for (device, name) in zip(devices, ["alice", "bob", "carl"]) {
                let refused = try device.failedOperations()
                #expect(refused.allSatisfy { $0.error.code != .forbidden || name == "carl" }, "\(name): \(refused.map(\.error))")
                try device.discardFailed(.all)
            }
            for device in devices { _ = try await device.sync() }
            try await follower.follow()

            let table = try await harness.rows(of: "erp.items", columns: Self.columns)
            #expect(table.count > 5, "the run wrote rows (seed \(seed))")
            for (device, name) in zip(devices, ["alice", "bob", "carl"]) {
                #expect(try device.pendingOperations().isEmpty, "\(name) uploaded everything (seed \(seed))")
                let expected = name == "carl" ? table.filter { $0.value["region"] == "north" } : table
                let local = try TableHarness.local(device, "items")
                #expect(local == expected, "\(name) holds the table's rows it may read (seed \(seed)): \(Self.difference(local, expected))")
                if local != expected {
                    let ids = Set(local.keys).union(expected.keys).filter { local[$0] != expected[$0] }.map { "'\($0)'" }.joined(separator: ",")
                    print("DEBUG records:", try await harness.value("SELECT string_agg(concat_ws(' ', id, version, updated_by, deleted, data, prior_version, prior_data), E'\\n') FROM records WHERE id IN (\(ids))") ?? "")
                    print("DEBUG history:", try await harness.value("SELECT string_agg(concat_ws(' ', id, version, data, superseded_version), E'\\n' ORDER BY version) FROM record_history WHERE id IN (\(ids))") ?? "")
                    print("DEBUG carl feed:", try await harness.feed("carl", "items").changes.filter { ids.contains("'\($0.id)'") })
                }
            }
            let followed = await follower.state
            #expect(followed == table, "the follower's cursor rebuilt the table (seed \(seed)): \(Self.difference(followed, table))")
            if followed != table {
                let ids = Set(followed.keys).union(table.keys).filter { followed[$0] != table[$0] }.map { "'\($0)'" }.joined(separator: ",")
                print("DEBUG records:", try await harness.value("SELECT string_agg(concat_ws(' ', id, version, updated_by, deleted, data, prior_version, prior_data), E'\\n') FROM records WHERE id IN (\(ids))") ?? "")
                print("DEBUG history:", try await harness.value("SELECT string_agg(concat_ws(' ', id, version, data, superseded_version), E'\\n' ORDER BY version) FROM record_history WHERE id IN (\(ids))") ?? "")
                print("DEBUG follower log:", await follower.log.filter { ids.contains("'\($0.id)'") }.map { "\($0.id)@\($0.version) deleted=\($0.deleted) gone=\($0.gone) by \($0.updatedBy ?? "?")" })
                print("DEBUG follower pages:", await follower.pages)
            }
            let repeats = await follower.repeats
            #expect(repeats.isEmpty, "no change reached the cursor twice (seed \(seed)): \(repeats)")
        }
    }

    /// One SQL session: a few transactions of random inserts, updates, deletes and COPYs, a quarter rolled back.
    static func sqlSession(_ harness: TableHarness, seed: UInt64, name: String) async throws {
        var random = SeededGenerator(seed: seed)
        try await harness.sql(searchPath: "erp") { connection in
            for transaction in 0..<3 {
                try await connection.query("BEGIN", logger: TableHarness.logger)
                do {
                    for step in 0..<random.int(1...4) {
                        let id = "i\(random.int(0...9))"
                        switch random.int(0...4) {
                        case 0:
                            try await connection.query(
                                PostgresQuery(unsafeSQL: "INSERT INTO items (id, region, a, b, c) VALUES ('\(id)', '\(random.regionText)', '\(name)-\(transaction)-\(step)', \(random.int(0...99)), \(random.bool)) ON CONFLICT (id) DO UPDATE SET a = excluded.a"),
                                logger: TableHarness.logger)
                        case 1:
                            try await connection.query(PostgresQuery(unsafeSQL: "UPDATE items SET b = coalesce(b, 0) + 1 WHERE id = '\(id)'"), logger: TableHarness.logger)
                        case 2:
                            try await connection.query(PostgresQuery(unsafeSQL: "UPDATE items SET region = '\(random.regionText)', c = NOT coalesce(c, false) WHERE id IN ('\(id)', 'i\(random.int(0...9))')"), logger: TableHarness.logger)
                        case 3:
                            try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM items WHERE id = '\(id)'"), logger: TableHarness.logger)
                        default:
                            let fresh = "k-\(name)-\(transaction)-\(step)"
                            try await connection.copyFrom(table: "items", columns: ["id", "region", "a", "b"], logger: TableHarness.logger) { writer in
                                try await writer.write(ByteBuffer(string: "\(fresh)\t\(random.regionText)\tcopied\t\(random.int(0...9))\n"))
                            }
                        }
                    }
                    try await connection.query(random.int(0...3) == 0 ? "ROLLBACK" : "COMMIT", logger: TableHarness.logger)
                } catch {
                    // A deadlock with another session or device is PostgreSQL's to break: this transaction lost.
                    try await connection.query("ROLLBACK", logger: TableHarness.logger)
                }
            }
        }
    }

    /// One device: a few random local writes (creates, patches, deletes of what it holds), then a sync.
    static func deviceRound(_ device: CairnClient, seed: UInt64, name: String, regions: [String]) async throws {
        var random = SeededGenerator(seed: seed)
        for _ in 0..<random.int(1...4) {
            let held = try device.records(Query("items")).map(\.id).sorted()
            switch random.int(0...3) {
            case 0 where !held.isEmpty:
                _ = try device.patch("items", id: held[random.int(0...(held.count - 1))], ["a": .string("\(name)-device"), "b": .integer(Int64(random.int(100...199)))])
            case 1 where !held.isEmpty:
                try device.delete("items", id: held[random.int(0...(held.count - 1))])
            default:
                _ = try device.save("items", id: "d-\(UUID().uuidString.prefix(8))", data: ["region": .string(regions[random.int(0...(regions.count - 1))]), "a": "new", "c": .bool(random.bool)])
            }
        }
        _ = try await device.sync()
    }

    /// Which ids differ between two sets of rows, for messages.
    static func difference(_ left: [String: [String: JSONValue]], _ right: [String: [String: JSONValue]]) -> String {
        let ids = Set(left.keys).union(right.keys).filter { left[$0] != right[$0] }.sorted()
        return ids.map { "\($0): \(left[$0].map { "\($0)" } ?? "absent") vs \(right[$0].map { "\($0)" } ?? "absent")" }.joined(separator: "; ")
    }
}

/// A reader following the feed with one cursor in small pages: what it rebuilt, and any change it got twice.
actor Follower {
    let harness: TableHarness
    var cursor: String?
    private(set) var state: [String: [String: JSONValue]] = [:]
    private var seen: Set<String> = []
    private(set) var repeats: [String] = []
    private(set) var log: [Change] = []
    private(set) var pages: [String] = []

    init(harness: TableHarness) { self.harness = harness }

    /// Pulls to the end of the feed from where it was.
    func follow() async throws {
        let page = try await harness.feed("dave", "items", since: cursor, limit: 3)
        log += page.changes
        pages.append("\(page.changes.map(\.version))")
        for change in page.changes {
            if !seen.insert("\(change.id)@\(change.version)").inserted { repeats.append("\(change.id)@\(change.version)") }
            state[change.id] = change.deleted || change.gone ? nil : change.data
        }
        cursor = page.cursor
    }
}

/// The draws the test makes, from the suite's seeded generator (``SeededGenerator``), so a failing seed can be run
/// again.
extension SeededGenerator {
    init(seed: UInt64) { self.init(state: seed) }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    var bool: Bool { mutating get { Bool.random(using: &self) } }
    var regionText: String { mutating get { bool ? "north" : "south" } }
    var region: JSONValue { mutating get { .string(regionText) } }
}
