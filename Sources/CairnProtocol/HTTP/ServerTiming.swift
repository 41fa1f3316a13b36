/// W3C Server-Timing (`Server-Timing: feed;dur=12.5`): how long the server spent on an answer, written by the server
/// on changes pages and read by the SDK to tell the link's round trip apart from the server's work.
///
/// ```swift
/// let value = ServerTiming.header("feed", milliseconds: 12.5)     // "feed;dur=12.5"
/// ServerTiming.milliseconds("feed", in: value)                    // 12.5
/// ```
public enum ServerTiming {
    /// The header value of `metric` with a duration in milliseconds (a tenth of a millisecond at most).
    public static func header(_ metric: String, milliseconds: Double) -> String {
        let tenths = (max(0, milliseconds) * 10).rounded()
        return "\(metric);dur=\(Int(tenths) / 10).\(Int(tenths) % 10)"
    }

    /// The header value of `metric`, timed from `start` until now.
    public static func header(_ metric: String, since start: ContinuousClock.Instant) -> String {
        let elapsed = ContinuousClock.now - start
        return header(metric, milliseconds: Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    }

    /// The duration of `metric` in a `Server-Timing` value (metrics separated by commas, parameters by semicolons),
    /// or `nil` when it is absent or has no `dur`.
    public static func milliseconds(_ metric: String, in value: String?) -> Double? {
        guard let value else { return nil }
        for entry in value.split(separator: ",") {
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: " \t") }
            guard let name = parts.first, name == metric else { continue }
            for parameter in parts.dropFirst() where parameter.hasPrefix("dur=") {
                guard let number = Double(parameter.dropFirst(4)), number >= 0, number.isFinite else { return nil }
                return number
            }
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in characters: String) -> Substring {
        var text = self
        while let first = text.first, characters.contains(first) { text = text.dropFirst() }
        while let last = text.last, characters.contains(last) { text = text.dropLast() }
        return text
    }
}
