import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Data rules against an independent evaluator")
struct DataRulesPropertyTests {
    static let users = ["alice", "bob", "rita"]
    static let regions = ["north", "south", "east", "west"]

    /// A device of one user: its cursor and the records it holds.
    struct Device {
        var cursor: String?
        var records: [String: [String: JSONValue]] = [:]
    }

    @Test("random records, claims, rules and roles: every user's device holds exactly what an independent evaluator allows, no answer names a record outside it, and writes are refused exactly when the rules say", arguments: [UInt64(21), 4242, 7, 99_001, 31_337])
    func randomRules(seed: UInt64) async throws {
        var random = SplitMix(seed: seed)
        let fixture = try await RulesFixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let admin = fixture.server.server.admin
            var model: [String: [String: JSONValue]] = [:]
            var claims: [String: [String: JSONValue]] = ["alice": [:], "bob": ["regions": ["north"]], "rita": [:]]
            var roles: [String: Role] = ["alice": .writer, "bob": .writer, "rita": .reader]
            var read = RuleOracle.Rule.leaf(.assigneeIsUser), write = RuleOracle.Rule.leaf(.assigneeIsUser)
            var devices = Dictionary(uniqueKeysWithValues: Self.users.map { ($0, Device()) })
            try await admin.setSchema(project: "field", RulesFixture.schema(read: read.filter, write: write.filter))

            for round in 0..<14 {
                let step = round == 0 ? 0 : Int.random(in: 0..<5, using: &random)
                let context = "seed \(seed), round \(round), step \(step)"
                switch step {
                case 0, 1:
                    // The admin writes: creates, changes and deletes.
                    var operations: [SyncOperation] = []
                    for _ in 0..<Int.random(in: 4...12, using: &random) {
                        let id = "j\(Int.random(in: 0..<30, using: &random))"
                        if model[id] != nil, Int.random(in: 0..<4, using: &random) == 0 {
                            operations.append(SyncOperation(opId: newOpID(), collection: "jobs", id: id, op: .delete))
                            model[id] = nil
                        } else {
                            let data = Self.randomData(using: &random)
                            operations.append(SyncOperation(opId: newOpID(), collection: "jobs", id: id, op: model[id] == nil ? .create : .update, data: data))
                            model[id] = data
                        }
                    }
                    #expect(try await fixture.push("ada", operations).allSatisfy { $0.status == .applied }, "\(context)")
                case 2:
                    let user = Self.users.randomElement(using: &random)!
                    claims[user] = Self.randomClaims(using: &random)
                    try await admin.setClaims(user: user, project: "field", claims[user]!)
                case 3:
                    read = .random(depth: 3, using: &random)
                    write = .random(depth: 2, using: &random)
                    try await admin.setSchema(project: "field", RulesFixture.schema(read: read.filter, write: write.filter))
                default:
                    roles["alice"] = roles["alice"] == .admin ? .writer : .admin
                    try await admin.grant(user: "alice", project: "field", role: roles["alice"]!)
                }

                // Writers try changes; each is applied exactly when the evaluator allows it before and after.
                for user in ["alice", "bob"] {
                    let oracle = RuleOracle(user: user, claims: claims[user]!)
                    let bound = roles[user] != .admin
                    func writable(_ data: [String: JSONValue]) -> Bool { !bound || (oracle.matches(read, data) && oracle.matches(write, data)) }
                    let id = "j\(Int.random(in: 0..<30, using: &random))"
                    let data = Self.randomData(using: &random, user: user)
                    let operation = SyncOperation(opId: newOpID(), collection: "jobs", id: id, op: model[id] == nil ? .create : .update, data: data)
                    let result = try await fixture.push(user, [operation])[0]
                    let allowed = model[id].map(writable) ?? true && writable(data)
                    #expect(result.status == (allowed ? .applied : .rejected), "\(context): \(user) writing \(id)")
                    if allowed { model[id] = data } else { #expect(result.error?.code == .forbidden, "\(context)") }
                }

                // Every device pulls from where it was.
                for user in Self.users {
                    let oracle = RuleOracle(user: user, claims: claims[user]!)
                    let readable = model.filter { roles[user] == .admin || oracle.matches(read, $0.value) }
                    var device = devices[user]!
                    let pulled = try await fixture.pullAll(user, "jobs", since: device.cursor, limit: 7)
                    let named = Set(pulled.changes.map(\.id))
                    #expect(named.isSubset(of: Set(device.records.keys).union(readable.keys)), "\(context): \(user) was told of records it never could read")
                    if device.cursor == nil { device.records = [:] }
                    for change in pulled.changes {
                        if change.deleted || change.gone { device.records[change.id] = nil } else { device.records[change.id] = change.data }
                    }
                    device.cursor = pulled.cursor
                    let wrong = Set(device.records.keys).union(readable.keys).filter { device.records[$0] != readable[$0] }.sorted()
                    #expect(wrong.isEmpty, "\(context): \(user) pulled \(pulled.changes.map { "\($0.id)@\($0.version)\($0.gone ? " gone" : $0.deleted ? " deleted" : "")" }), holds \(wrong.map { "\($0): \(device.records[$0].map { JSONValue.object($0).jsonText() } ?? "-") instead of \(readable[$0].map { JSONValue.object($0).jsonText() } ?? "-")" })")
                    // A fresh device agrees.
                    let fresh = try await fixture.pullAll(user, "jobs", limit: 11)
                    #expect(Set(fresh.changes.map(\.id)) == Set(readable.keys), "\(context): \(user)'s snapshot")
                    devices[user] = device
                }
            }
        }
    }

    /// A record's data: an assignee, region and priority, each sometimes missing.
    static func randomData(using random: inout SplitMix, user: String? = nil) -> [String: JSONValue] {
        var data: [String: JSONValue] = ["title": .string("job \(Int.random(in: 0..<1000, using: &random))")]
        let assignees = ["alice", "bob", "rita", "carl"] + (user.map { [$0, $0] } ?? [])
        if Int.random(in: 0..<6, using: &random) > 0 { data["assignee"] = .string(assignees.randomElement(using: &random)!) }
        if Int.random(in: 0..<6, using: &random) > 0 { data["region"] = .string(regions.randomElement(using: &random)!) }
        if Int.random(in: 0..<4, using: &random) > 0 { data["priority"] = .integer(Int64.random(in: 0...5, using: &random)) }
        return data
    }

    /// Claims of every shape: missing, fitting, a single value for `in`, and values that fit no field.
    static func randomClaims(using random: inout SplitMix) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [:]
        switch Int.random(in: 0..<5, using: &random) {
        case 0: break
        case 1: claims["regions"] = .string(regions.randomElement(using: &random)!)
        case 2: claims["regions"] = ["nested": true]
        default: claims["regions"] = .array(regions.filter { _ in Bool.random(using: &random) }.map { .string($0) })
        }
        switch Int.random(in: 0..<4, using: &random) {
        case 0: break
        case 1: claims["level"] = "high"
        default: claims["level"] = .integer(Int64.random(in: 0...5, using: &random))
        }
        return claims
    }
}
