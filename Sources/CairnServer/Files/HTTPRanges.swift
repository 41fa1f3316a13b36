import CairnProtocol

/// An upload chunk's `Content-Range: bytes START-END/TOTAL` (or `bytes */TOTAL`, which only asks for the offset).
struct ContentRange: Sendable, Equatable {
    /// The chunk's bytes, or `nil` for `bytes */TOTAL`.
    var bytes: ClosedRange<Int64>?
    /// The whole file's size.
    var total: Int64

    /// Parses the header; anything else is `422 validation_failed` naming it.
    init(header: String) throws {
        let invalid = ErrorBody.validation(
            "Content-Range must be \"bytes START-END/TOTAL\" or \"bytes */TOTAL\"; got \"\(header.prefix(100))\"", field: "Content-Range")
        guard header.hasPrefix("bytes "), let slash = header.firstIndex(of: "/") else { throw invalid }
        let span = header[header.index(header.startIndex, offsetBy: 6)..<slash]
        guard let total = HTTPRanges.number(header[header.index(after: slash)...]) else { throw invalid }
        self.total = total
        if span == "*" {
            bytes = nil
            return
        }
        let ends = span.split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2, let start = HTTPRanges.number(ends[0]), let end = HTTPRanges.number(ends[1]), start <= end, end < total
        else { throw invalid }
        bytes = start...end
    }
}

/// A download's `Range` header, read as RFC 9110 says: one byte range is honoured, anything else (several ranges,
/// another unit, a malformed value) is ignored and the whole file is sent.
enum HTTPRanges {
    /// What a `Range` asks of a file of `size` bytes.
    enum Answer: Equatable {
        /// No usable range: send everything.
        case whole
        /// Send these bytes (`206`).
        case part(Range<Int64>)
        /// The range starts past the end (`416`).
        case unsatisfiable
    }

    static func answer(range header: String?, size: Int64) -> Answer {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let ends = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2 else { return .whole }
        switch (number(ends[0]), number(ends[1])) {
        case (let start?, let end?):
            guard start <= end else { return .whole }
            return start < size ? .part(start..<min(end + 1, size)) : .unsatisfiable
        case (let start?, nil) where ends[1].isEmpty:
            return start < size ? .part(start..<size) : .unsatisfiable
        case (nil, let suffix?) where ends[0].isEmpty:
            return suffix > 0 && size > 0 ? .part(max(0, size - suffix)..<size) : .unsatisfiable
        default:
            return .whole
        }
    }

    /// A non-negative decimal of at most 18 digits, else `nil`.
    static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}
