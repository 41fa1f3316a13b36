import CairnProtocol
import CairnTesting

/// An evaluator of the rules the property test generates, written apart from the server: plain Swift over the
/// record's data, with PROTOCOL.md's semantics for the few conditions used (a missing field, a missing claim or a
/// claim that does not fit matches nothing; `not` inverts).
struct RuleOracle {
    /// The generated rule conditions, by what they compare.
    enum Leaf: CaseIterable {
        case assigneeIsUser, regionInClaim, priorityAtLeastClaim, regionIsNorth, priorityBelowThree

        var filter: Filter {
            switch self {
            case .assigneeIsUser: .condition("assignee", .eq, RuleParameter.userName.value)
            case .regionInClaim: .condition("region", .in, RuleParameter.claim("regions").value)
            case .priorityAtLeastClaim: .condition("priority", .gte, RuleParameter.claim("level").value)
            case .regionIsNorth: .condition("region", .eq, "north")
            case .priorityBelowThree: .condition("priority", .lt, 3)
            }
        }
    }

    /// A rule as the test builds it.
    indirect enum Rule {
        case leaf(Leaf)
        case and([Rule])
        case or([Rule])
        case not(Rule)

        var filter: Filter {
            switch self {
            case .leaf(let leaf): leaf.filter
            case .and(let rules): .and(rules.map(\.filter))
            case .or(let rules): .or(rules.map(\.filter))
            case .not(let rule): .not(rule.filter)
            }
        }

        static func random(depth: Int, using generator: inout SplitMix) -> Rule {
            if depth == 0 || Int.random(in: 0..<3, using: &generator) == 0 { return .leaf(Leaf.allCases.randomElement(using: &generator)!) }
            var children: [Rule] = []
            for _ in 0..<Int.random(in: 1...3, using: &generator) { children.append(random(depth: depth - 1, using: &generator)) }
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: return .and(children)
            case 1: return .or(children)
            default: return .not(children[0])
            }
        }
    }

    let user: String
    let claims: [String: JSONValue]

    func matches(_ rule: Rule, _ data: [String: JSONValue]) -> Bool {
        switch rule {
        case .and(let rules): return rules.allSatisfy { matches($0, data) }
        case .or(let rules): return rules.contains { matches($0, data) }
        case .not(let rule): return !matches(rule, data)
        case .leaf(let leaf): return matches(leaf, data)
        }
    }

    private func matches(_ leaf: Leaf, _ data: [String: JSONValue]) -> Bool {
        let assignee = data["assignee"]?.stringValue, region = data["region"]?.stringValue
        let priority: Int64? = if case .integer(let value)? = data["priority"] { value } else { nil }
        switch leaf {
        case .assigneeIsUser: return assignee != nil && assignee == user
        case .regionIsNorth: return region == "north"
        case .priorityBelowThree: return priority.map { $0 < 3 } ?? false
        case .regionInClaim:
            guard let region else { return false }
            switch claims["regions"] {
            case .string(let one): return region == one
            case .array(let values): return values.contains(.string(region))
            default: return false
            }
        case .priorityAtLeastClaim:
            guard let priority, case .integer(let level)? = claims["level"] else { return false }
            return priority >= level
        }
    }
}
