import Cairn
import CairnProtocol
import CairnTesting
import Foundation
import Testing

/// A seeded generator (SplitMix64), so that a failing case can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Queries: the local store, the server's where and a plain evaluator agree")
struct FilterAgreementTests {
    static let strings: [String] = [
        "", "a", "A", "ab", "Ab", "milk", "Milk", "MILK", "buy milk", "%", "_", "a%b", "a_b", "100%", "é", "É", "e\u{301}", "café",
        "CAFÉ", "naïve", "Straße", "日本", "日本語", "😀", "a😀b", "z", "Z", "~", " a", "a ",
    ]
    static let instants: [String] = [
        "2026-11-23T10:00:00Z", "2026-11-23T12:00:00+02:00", "2026-11-23t09:30:00-00:30", "2026-11-23T10:00:00.5Z",
        "2026-11-23T10:00:00.250+00:00", "2026-11-24T00:00:00+23:59", "2026-11-22T23:00:00-11:00", "2025-01-01T00:00:00Z",
        "2026-11-23 10:00:01Z",
    ]

    struct Generator {
        var random: SeededGenerator

        mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }

        mutating func scalar() -> JSONValue {
            switch Int.random(in: 0..<5, using: &random) {
            case 0: return .string(pick(FilterAgreementTests.strings))
            case 1: return .integer(Int64.random(in: -3...3, using: &random))
            case 2: return .number(pick([0.5, -1.5, 2.0, 1.0, 3.25]))
            case 3: return .bool(chance(0.5))
            default: return .string(pick(["1", "true", "[1]"]))
            }
        }

        /// A value for `field`, or nil for a missing one; sometimes null.
        mutating func value(_ field: String) -> JSONValue? {
            if chance(0.15) { return nil }
            if chance(0.08) { return .null }
            switch field {
            case "title": return .string(pick(FilterAgreementTests.strings))
            case "done": return .bool(chance(0.5))
            case "due": return .string(pick(FilterAgreementTests.instants))
            case "count": return chance(0.7) ? .integer(Int64.random(in: -2...4, using: &random)) : .number(pick([2.0, -1.0, 0.0]))
            case "score": return chance(0.5) ? .integer(Int64.random(in: -2...4, using: &random)) : .number(pick([0.5, 2.0, 2.5, -1.25]))
            default:
                if chance(0.15) { return scalar() }
                return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in scalar() })
            }
        }

        /// A condition whose value fits the field, or an and/or/not of them.
        mutating func filter(depth: Int = 0) -> Filter {
            if depth < 3, chance(0.3) {
                switch Int.random(in: 0..<5, using: &random) {
                case 0: return .not(filter(depth: depth + 1))
                case 1, 2: return .and((0..<Int.random(in: 0...3, using: &random)).map { _ in filter(depth: depth + 1) })
                default: return .or((0..<Int.random(in: 0...3, using: &random)).map { _ in filter(depth: depth + 1) })
                }
            }
            let field = pick(["id", "title", "done", "due", "count", "score", "tags"])
            var ops: [FilterOperator] = [.eq, .ne, .in, .exists]
            switch field {
            case "id", "title": ops += [.lt, .lte, .gt, .gte, .like]
            case "due", "count", "score": ops += [.lt, .lte, .gt, .gte]
            case "tags": ops += [.contains]
            default: break
            }
            let op = pick(ops)
            switch op {
            case .exists: return .condition(field, op, .bool(chance(0.5)))
            case .like: return .condition(field, op, .string(pick(["%", "a%", "%milk%", "_", "__", "%é%", "MILK", "a_b", "%b", "caf_", "%😀%"])))
            case .in: return .condition(field, op, .array((0..<Int.random(in: 0...3, using: &random)).map { _ in target(field, allowNull: true) }))
            default: return .condition(field, op, target(field, allowNull: op == .eq || op == .ne))
            }
        }

        mutating func target(_ field: String, allowNull: Bool) -> JSONValue {
            if allowNull, chance(0.1) { return .null }
            switch field {
            case "id": return .string("r-\(Int.random(in: 0..<40, using: &random))")
            case "tags": return scalar()
            default:
                if let value = value(field), !value.isNull { return value }
                return target(field, allowNull: allowNull)
            }
        }
    }

    @Test("random records and random nested filters select the same ids locally, on the server and in the evaluator", arguments: [7, 2026])
    func agreement(seed: Int) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            var generator = Generator(random: SeededGenerator(state: UInt64(seed)))
            var records: [String: [String: JSONValue]] = [:]
            for index in 0..<120 {
                var data: [String: JSONValue] = [:]
                for field in ["title", "done", "due", "count", "score", "tags"] {
                    if let value = generator.value(field) { data[field] = value }
                }
                records["r-\(index)"] = data.filter { !$0.value.isNull }
            }
            _ = try await fixture.push("alice", records.sorted { $0.key < $1.key }.map { id, data in
                SyncOperation(opId: newOpID(), collection: "notes", id: id, op: .create, data: data)
            })
            let bob = try await fixture.client("bob")
            try await bob.pull(["notes"])
            #expect(try bob.count(Query("notes")) == records.count)
            let schema = try #require(bob.schema?.collection(named: "notes"))

            var partial = 0
            for _ in 0..<150 {
                let filter = generator.filter()
                let expected = Set(records.filter { FilterEvaluator.matches(filter, id: $0.key, data: $0.value, schema: schema) }.keys)
                let local = Set(try bob.records(Query("notes").filter(filter)).map(\.id))
                let server = Set(try await fixture.pullAll("bob", "notes", limit: 50, filter: filter).changes.map(\.id))
                let text = String(decoding: try CairnJSON.encode(filter), as: UTF8.self)
                #expect(local == expected, "local query differs for \(text): \(local.symmetricDifference(expected).sorted())")
                #expect(server == expected, "server where differs for \(text): \(server.symmetricDifference(expected).sorted())")
                if !expected.isEmpty && expected.count < records.count { partial += 1 }
            }
            #expect(partial > 40, "the filters select something but not everything often enough to mean something")
        }
    }
}
