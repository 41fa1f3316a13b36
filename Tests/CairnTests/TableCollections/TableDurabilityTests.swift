import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import NIOCore
import PostgresNIO
import Testing

/// Collections in tables at scale and through failures: a large COPY, two instances, a database restart; and what
/// the server refuses of SQL and of project admins.
@Suite("Collections in PostgreSQL tables: scale, failures and refusals", .timeLimit(.minutes(20)))
struct TableDurabilityTests {
    static let schema = Schema(collections: [CollectionSchema(
        name: "readings",
        fields: [FieldSchema(name: "meter", type: .string, required: true), FieldSchema(name: "value", type: .integer)],
        conflictPolicy: .lastWriterWins, table: "plant.readings")])

    @Test("a COPY of 100,000 rows reaches a device by one sync")
    func largeCopy() async throws {
        guard TableHarness.available("the large COPY test") else { return }
        try await TableHarness.with(schema: Self.schema) { harness in
            let device = try await harness.client("alice")
            _ = try await device.sync()
            try await Self.explained { try await harness.sql(searchPath: "plant") { connection in
                try await connection.copyFrom(table: "readings", columns: ["id", "meter", "value"], logger: TableHarness.logger) { writer in
                    for chunk in stride(from: 0, to: 100_000, by: 10_000) {
                        var text = ""
                        for index in chunk..<(chunk + 10_000) { text += "r\(index)\tm\(index % 97)\t\(index)\n" }
                        try await writer.write(ByteBuffer(string: text))
                    }
                }
            } }
            #expect(try await harness.value("SELECT count(*)::text FROM records WHERE collection = 'readings'") == "100000")
            let summary = try await device.sync()
            #expect(summary.pulled == 100_000)
            #expect(try device.rows("SELECT count(*) AS n FROM readings").first?["n"] == 100_000)
            #expect(try device.record("readings", id: "r99999")?.data == ["meter": .string("m\(99_999 % 97)"), "value": 99_999])
            #expect(try device.record("readings", id: "r0")?.updatedBy == "sql")
        }
    }

    @Test("SQL writes and device pushes through two instances lose nothing when the database restarts in the middle")
    func twoInstancesAndARestart() async throws {
        guard TableHarness.available("the database restart test") else { return }
        let cluster = try PostgresCluster.start()
        defer { cluster.stop() }
        let url = try cluster.makeDatabase()
        try await TableHarness.with(schema: Self.schema, url: url) { first in
            let second = try await TestServer.start { $0.postgresURL = url }
            try await withCleanup({ await TableHarness.stop(second) }) {
                let harness2 = TableHarness(server: second, url: url)
                let alice = try await first.client("alice"), bob = try await harness2.client("bob")
                let progress = Progress()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // Another program writes in transactions of 20 rows; a transaction the restart cuts is written again.
                    group.addTask {
                        for batch in 0..<12 {
                            let values = (0..<20).map { "('s\(batch)-\($0)', 'sql', \(batch))" }.joined(separator: ", ")
                            try await Self.retrying {
                                try await first.execute("INSERT INTO plant.readings (id, meter, value) VALUES \(values) ON CONFLICT (id) DO NOTHING")
                            }
                            await progress.step()
                        }
                    }
                    for (device, name) in [(alice, "alice"), (bob, "bob")] {
                        group.addTask {
                            for round in 0..<12 {
                                for index in 0..<5 { _ = try device.save("readings", id: "\(name)-\(round)-\(index)", data: ["meter": .string(name), "value": .integer(Int64(round))]) }
                                _ = try? await device.sync()
                                await progress.step()
                            }
                        }
                    }
                    group.addTask {
                        await progress.wait(until: 12)
                        try cluster.restart()
                    }
                    try await group.waitForAll()
                }
                for device in [alice, bob] {
                    try await Self.retrying { _ = try await device.sync() }
                    #expect(try device.pendingOperations().isEmpty)
                }
                for device in [alice, bob] { _ = try await device.sync() }
                let table = try await first.rows(of: "plant.readings", columns: ["meter", "value"])
                #expect(table.count == 360, "12 SQL transactions of 20 rows and 2 devices × 12 rounds of 5: every committed row and every pushed record is in the table")
                for device in [alice, bob] { #expect(try TableHarness.local(device, "readings") == table) }
                let feed = try await harness2.feed("carl", "readings")
                #expect(Set(feed.changes.map(\.id)) == Set(table.keys) && feed.changes.count == table.count)
            }
        }
    }

    @Test("SQL rows devices could not take are refused with a message; a project admin may not change a schema's tables, an operator may")
    func refusals() async throws {
        guard TableHarness.available("the table refusal tests") else { return }
        try await TableHarness.with(schema: Self.schema) { harness in
            for (statement, words) in [
                ("INSERT INTO plant.readings (id, meter) VALUES ('bad id', 'm1')", "is not a record id"),
                ("INSERT INTO plant.readings (id, value) VALUES ('r1', 5)", "column meter of row r1 is required"),
            ] {
                do {
                    try await harness.execute(statement)
                    Issue.record("\(statement) was accepted")
                } catch {
                    #expect(String(reflecting: error).contains(words) || "\(error)".contains(words) || Self.message(error).contains(words), "\(Self.message(error))")
                }
            }
            #expect(try await harness.value("SELECT count(*)::text FROM records") == "0")

            let admin = harness.server.server.admin
            try await admin.addUser("ada", password: TestServer.password)
            try await admin.grant(user: "ada", project: TableHarness.project, role: .admin)
            try await admin.addUser("opal", password: TestServer.password, isOperator: true)
            let http = TestHTTPClient(baseURL: harness.server.baseURL)
            var unchanged = Self.schema
            unchanged.collections[0].fields.append(FieldSchema(name: "note", type: .string))
            var moved = unchanged
            moved.collections[0].table = "plant.other_readings"
            let ada = try await http.login("ada").accessToken, opal = try await http.login("opal").accessToken
            let refused = try await http.send(.PUT, "/v1/projects/field/schema", token: ada, value: moved)
            #expect(refused.status == 403 && refused.errorCode == "forbidden")
            #expect(try await http.send(.PUT, "/v1/projects/field/schema", token: ada, value: unchanged).status == 200, "the same tables: an admin may")
            let operatorMove = try await http.send(.PUT, "/v1/projects/field/schema", token: opal, value: moved)
            #expect(operatorMove.status == 200, "\(operatorMove.status): \(String(decoding: operatorMove.body, as: UTF8.self))")
            var own = unchanged
            own.collections[0].table = "public.records"
            let ownTable = try await http.send(.PUT, "/v1/projects/field/schema", token: opal, value: own)
            #expect(ownTable.status == 422 && ownTable.errorCode == "validation_failed", "\(ownTable.status): \(String(decoding: ownTable.body, as: UTF8.self))")
        }
    }

    /// Runs `body`, rethrowing its failure in PostgreSQL's words (postgres-nio hides them from `description`).
    static func explained(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as PSQLError {
            throw ErrorBody(code: .internalError, message: String(reflecting: error))
        }
    }

    /// PostgreSQL's own words for a refused statement.
    static func message(_ error: any Error) -> String {
        (error as? PSQLError)?.serverInfo?[.message] ?? "\(error)"
    }

    /// Runs `body` until it succeeds, for work a database restart may cut. Each attempt that has no answer within
    /// 15 s is left behind and made again: a connection opened while the database restarts can wait for ever.
    static func retrying(_ body: @escaping @Sendable () async throws -> Void) async throws {
        for attempt in 1...200 {
            switch await TableHarness.attempt(within: .seconds(15), body) {
            case .success: return
            case .failure(let error) where attempt == 200: throw error
            case .failure: try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}

/// Counts writers' steps, so that the restart comes in the middle of their work.
actor Progress {
    private var steps = 0
    func step() { steps += 1 }
    func wait(until count: Int) async {
        while steps < count { try? await Task.sleep(for: .milliseconds(10)) }
    }
}
