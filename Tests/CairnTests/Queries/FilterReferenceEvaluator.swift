import CairnProtocol
import Foundation

// The referee of FilterAgreementTests, and of the filter fuzz target (Fuzz/, through a symlink): one copy of the
// plain semantics both compare compiled SQL with.

/// PROTOCOL.md's filter semantics written plainly over JSON values, with no SQL: the referee of the property test.
enum FilterEvaluator {
    static func matches(_ filter: Filter, id: String, data: [String: JSONValue], schema: CollectionSchema) -> Bool {
        switch filter {
        case .and(let filters): return filters.allSatisfy { matches($0, id: id, data: data, schema: schema) }
        case .or(let filters): return filters.contains { matches($0, id: id, data: data, schema: schema) }
        case .not(let inner): return !matches(inner, id: id, data: data, schema: schema)
        case .condition(let field, let op, let target):
            let type: FieldType = field == "id" ? .string : schema.field(named: field)!.type
            let value: JSONValue = field == "id" ? .string(id) : (data[field] ?? .null)
            switch op {
            case .exists: return !value.isNull == (target == .bool(true))
            case .eq, .ne:
                let same = target.isNull ? value.isNull : (!value.isNull && equal(type, value, target))
                return op == .eq ? same : !same
            case .in:
                guard case .array(let targets) = target else { return false }
                return targets.contains { matches(.condition(field, .eq, $0), id: id, data: data, schema: schema) }
            case .lt, .lte, .gt, .gte:
                guard !value.isNull, let order = compare(type, value, target) else { return false }
                switch op {
                case .lt: return order < 0
                case .lte: return order <= 0
                case .gt: return order > 0
                default: return order >= 0
                }
            case .like:
                guard case .string(let text) = value, case .string(let pattern) = target else { return false }
                return like(Array(text.unicodeScalars), Array(pattern.unicodeScalars))
            case .contains:
                guard case .array(let elements) = value else { return false }
                return elements.contains { equal(.json, $0, target) }
            }
        }
    }

    /// Equality of two non-null values of a field of `type`: numbers by value, strings by code points, and in json
    /// fields only values of the same kind.
    static func equal(_ type: FieldType, _ left: JSONValue, _ right: JSONValue) -> Bool {
        switch (left, right) {
        case (.string(let a), .string(let b)):
            if type == .datetime { return instant(a) == instant(b) }
            return Array(a.unicodeScalars) == Array(b.unicodeScalars)
        case (.bool(let a), .bool(let b)): return a == b
        default:
            guard let a = number(left), let b = number(right) else { return false }
            return a == b
        }
    }

    static func compare(_ type: FieldType, _ left: JSONValue, _ right: JSONValue) -> Int? {
        switch (left, right) {
        case (.string(let a), .string(let b)):
            if type == .datetime {
                guard let x = instant(a), let y = instant(b) else { return nil }
                return x < y ? -1 : x == y ? 0 : 1
            }
            if a.utf8.elementsEqual(b.utf8) { return 0 }
            return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
        default:
            guard let a = number(left), let b = number(right) else { return nil }
            return a < b ? -1 : a == b ? 0 : 1
        }
    }

    static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .integer(let int): return Double(int)
        case .number(let double): return double
        default: return nil
        }
    }

    static func instant(_ text: String) -> Double? { RFC3339.date(from: text)?.timeIntervalSince1970 }

    /// SQL LIKE: `%` any run, `_` one character, ASCII letters regardless of case.
    static func like(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
        func fold(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
            (65...90).contains(scalar.value) ? Unicode.Scalar(scalar.value + 32)! : scalar
        }
        var memo: [Int: Bool] = [:]
        func match(_ t: Int, _ p: Int) -> Bool {
            if let known = memo[t * (pattern.count + 1) + p] { return known }
            let result: Bool
            if p == pattern.count {
                result = t == text.count
            } else if pattern[p] == "%" {
                result = match(t, p + 1) || (t < text.count && match(t + 1, p))
            } else if t < text.count, pattern[p] == "_" || fold(pattern[p]) == fold(text[t]) {
                result = match(t + 1, p + 1)
            } else {
                result = false
            }
            memo[t * (pattern.count + 1) + p] = result
            return result
        }
        return match(0, 0)
    }
}
