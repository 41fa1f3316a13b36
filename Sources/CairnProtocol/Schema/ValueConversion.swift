import Foundation

/// The rules that turn a field's value from one type into another, for ``SchemaMigration/Step/convert(field:to:format:)``
/// in both directions (stored records forward, an old app build's records back).
package enum ValueConversion {
    /// Whether values of type `from` can be converted to `to` (a `string` read as a `datetime` needs no format when
    /// it is RFC 3339 already).
    package static func converts(from: FieldType, to: FieldType, format: String?) -> Bool {
        if from == to || to == .json || to == .string { return true }
        switch (from, to) {
        case (.integer, .number), (.number, .integer), (.integer, .boolean), (.boolean, .integer),
            (.string, .integer), (.string, .number), (.string, .boolean), (.string, .datetime), (.string, .file), (.json, _):
            return true
        default:
            return false
        }
    }

    /// `value` (of type `from`) as a value of type `to`; `nil` when it has no such value (the text "soon" as a number).
    /// `format` reads and writes `datetime` values as text in that form (UTC, `en_US_POSIX`).
    package static func convert(_ value: JSONValue, from: FieldType, to: FieldType, format: String?) -> JSONValue? {
        if value.isNull { return value }
        if from == .datetime, to == .string, let format, case .string(let text) = value {
            return RFC3339.date(from: text).map { .string(formatter(format).string(from: $0)) } ?? value
        }
        if to.accepts(value) { return to == .integer ? value.integerValue.map(JSONValue.integer) : value }
        switch (value, to) {
        case (_, .json): return value
        case (.integer(let int), .boolean): return .bool(int != 0)
        case (.bool(let bool), .integer): return .integer(bool ? 1 : 0)
        case (.number(let double), .integer): return double.isFinite && abs(double) < 9.2e18 ? .integer(Int64(double.rounded())) : nil
        case (.string(let text), .integer): return Int64(text.trimmingCharacters(in: .whitespaces)).map(JSONValue.integer)
        case (.string(let text), .number):
            return Double(text.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? JSONValue.number($0) : nil }
        case (.string(let text), .boolean):
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: return nil
            }
        case (.string(let text), .datetime):
            guard let format else { return RFC3339.isValid(text) ? value : nil }
            return formatter(format).date(from: text).map { .string(RFC3339.string(from: $0)) }
        case (_, .string):
            switch value {
            case .integer(let int): return .string(String(int))
            case .number(let double): return .string(String(double))
            case .bool(let bool): return .string(bool ? "true" : "false")
            default: return .string(value.jsonText())
            }
        default:
            return nil
        }
    }

    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = format
        return formatter
    }
}
