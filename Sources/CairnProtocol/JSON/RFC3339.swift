import Foundation

/// RFC 3339 date-times as Cairn writes and reads them: UTC, with milliseconds, e.g. `2026-11-22T10:00:00.000Z`.
/// Reading also accepts offsets and any number of fractional digits.
public enum RFC3339 {
    /// Formats `date` in UTC with milliseconds, or with micro- or nanoseconds when that is what it takes for
    /// ``date(from:)`` to give back exactly the same `Date`.
    public static func string(from date: Date) -> String {
        let reference = date.timeIntervalSinceReferenceDate
        let whole = reference.rounded(.down)
        let fraction = reference - whole
        var seconds = Int64(whole) + referenceOffset
        var digits = 3
        var scaled = Int64((fraction * 1000).rounded())
        for candidate in [3, 6, 9] {
            digits = candidate
            let scale = pow(10, Double(candidate))
            scaled = Int64((fraction * scale).rounded())
            if Double(Int64(whole)) + Double(scaled) / scale == reference { break }
        }
        let limit = Int64(pow(10, Double(digits)))
        if scaled >= limit {
            scaled -= limit
            seconds += 1
        }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var text = ""
        text.reserveCapacity(32)
        pad(Int(parts.tm_year) + 1900, 4, &text)
        text += "-"
        pad(Int(parts.tm_mon) + 1, 2, &text)
        text += "-"
        pad(Int(parts.tm_mday), 2, &text)
        text += "T"
        pad(Int(parts.tm_hour), 2, &text)
        text += ":"
        pad(Int(parts.tm_min), 2, &text)
        text += ":"
        pad(Int(parts.tm_sec), 2, &text)
        text += "."
        pad(Int(scaled), digits, &text)
        return text + "Z"
    }

    /// Appends `value` with leading zeros to `width` digits (no `String(format:)`: it is slow on Linux).
    private static func pad(_ value: Int, _ width: Int, _ text: inout String) {
        let digits = String(value)
        if digits.count < width { text += String(repeating: "0", count: width - digits.count) }
        text += digits
    }

    /// Seconds from 1970-01-01 to 2001-01-01, Foundation's reference date.
    static let referenceOffset: Int64 = 978_307_200

    /// Parses an RFC 3339 date-time (`Z` or `±hh:mm` offset, optional fraction); `nil` if it is not one.
    public static func date(from text: String) -> Date? {
        guard let instant = parse(text) else { return nil }
        return Date(timeIntervalSinceReferenceDate: Double(instant.seconds - referenceOffset) + instant.fraction)
    }

    /// A text key of the instant `text` denotes, in UTC to the nanosecond, that sorts as the instants do (so SQL can
    /// compare date-times written with any offset, `t` or `T`, and any number of fractional digits); `nil` if `text`
    /// is not an RFC 3339 date-time. A leap second (`:60`) is the same instant as the next second.
    ///
    /// ```swift
    /// RFC3339.instantKey("2026-11-23T12:30:00+02:00") == RFC3339.instantKey("2026-11-23T10:30:00.000Z")   // true
    /// ```
    public static func instantKey(_ text: String) -> String? {
        guard let instant = parse(text) else { return nil }
        // Shifted so that every year from 0000 on is a positive count of seconds of 13 digits.
        let seconds = String(instant.seconds + 100_000_000_000)
        let nanos = String(instant.nanoseconds)
        return String(repeating: "0", count: max(0, 13 - seconds.count)) + seconds + "."
            + String(repeating: "0", count: 9 - nanos.count) + nanos
    }

    /// The parts of a parsed date-time: whole seconds since 1970 in UTC, and the fraction (as a number, and in
    /// nanoseconds, truncated).
    private struct Instant {
        var seconds: Int64
        var fraction: Double
        var nanoseconds: Int64
    }

    private static func parse(_ text: String) -> Instant? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20 else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for index in start..<(start + count) {
                let byte = bytes[index]
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0, 4), bytes[4] == 45, let month = number(5, 2), bytes[7] == 45,
            let day = number(8, 2), bytes[10] == 84 || bytes[10] == 116 || bytes[10] == 32,
            let hour = number(11, 2), bytes[13] == 58, let minute = number(14, 2), bytes[16] == 58,
            let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        var nanoseconds: Int64 = 0
        if index < bytes.count, bytes[index] == 46 {
            index += 1
            var numerator: Int64 = 0
            var denominator: Double = 1
            let start = index
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                if index - start < 18 {
                    numerator = numerator * 10 + Int64(bytes[index] - 48)
                    denominator *= 10
                }
                if index - start < 9 { nanoseconds = nanoseconds * 10 + Int64(bytes[index] - 48) }
                index += 1
            }
            guard index > start else { return nil }
            for _ in min(index - start, 9)..<9 { nanoseconds *= 10 }
            fraction = Double(numerator) / denominator
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds = 0
        switch bytes[index] {
        case 90, 122:
            index += 1
        case 43, 45:
            guard index + 6 == bytes.count, let oh = number(index + 1, 2), bytes[index + 3] == 58,
                let om = number(index + 4, 2), oh < 24, om < 60
            else { return nil }
            offsetSeconds = (oh * 3600 + om * 60) * (bytes[index] == 45 ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        guard day <= daysInMonth(year: year, month: month) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds)
        // An offset may move the instant out of years 0000...9999, which UTC text (``string(from:)``) cannot write.
        guard seconds >= -62_167_219_200, seconds < 253_402_300_800 else { return nil }
        return Instant(seconds: seconds, fraction: fraction, nanoseconds: nanoseconds)
    }

    /// True when `text` is a valid RFC 3339 date-time.
    public static func isValid(_ text: String) -> Bool { date(from: text) != nil }

    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }
}
