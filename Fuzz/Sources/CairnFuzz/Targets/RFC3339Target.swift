import CairnProtocol
import Foundation

/// `rfc3339`: date-times. A date that parses formats back to text that parses to the same date (exactly, for up to
/// nine fractional digits); formatting is stable; `instantKey` accepts exactly what `date(from:)` accepts, and two
/// texts' keys sort as their dates do.
enum RFC3339Target {
    static func run(_ bytes: [UInt8]) {
        // Two texts, split at the first NUL: the second is compared with the first.
        let parts = bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
        let first = String(decoding: parts[0], as: UTF8.self)
        let second = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : nil
        guard let date = check(first) else { return }
        guard let second, let other = check(second), let key = RFC3339.instantKey(first), let otherKey = RFC3339.instantKey(second) else { return }
        if key < otherKey { require(date <= other, "\(first) sorts before \(second) by key, after by date") }
        if key > otherKey { require(date >= other, "\(first) sorts after \(second) by key, before by date") }
        if key == otherKey { require(abs(date.timeIntervalSince(other)) < 1e-6, "\(first) and \(second) share a key, not a date") }
    }

    static func check(_ text: String) -> Date? {
        let date = RFC3339.date(from: text)
        require((RFC3339.instantKey(text) != nil) == (date != nil), "instantKey and date(from:) disagree on \(text.debugDescription)")
        require(RFC3339.isValid(text) == (date != nil), "isValid and date(from:) disagree on \(text.debugDescription)")
        guard let date else { return nil }
        let formatted = RFC3339.string(from: date)
        guard let back = RFC3339.date(from: formatted) else {
            require(false, "\(text.debugDescription) formats as \(formatted.debugDescription), which does not parse")
            return nil
        }
        let digits = fractionDigits(text)
        if digits <= 9 {
            require(back == date, "\(text.debugDescription) formats as \(formatted), which parses to another date")
        } else {
            require(abs(back.timeIntervalSince(date)) <= 1e-6, "\(text.debugDescription) formats as \(formatted), far from its date")
        }
        require(RFC3339.string(from: back) == formatted, "formatting \(formatted) is not stable")
        return date
    }

    /// How many digits follow the seconds' dot.
    static func fractionDigits(_ text: String) -> Int {
        let bytes = Array(text.utf8)
        guard bytes.count > 19, bytes[19] == UInt8(ascii: ".") else { return 0 }
        return bytes[20...].prefix { $0 >= 0x30 && $0 <= 0x39 }.count
    }
}
