import CairnProtocol
import Hummingbird

/// A request's query string read as `application/x-www-form-urlencoded`, as browsers' `URLSearchParams`, Python's
/// `urlencode` and `requests` write it: `+` is a space, `%2B` a plus, and names are decoded like values.
///
/// ```swift
/// let query = try request.formQuery           // ?where={"field":+"done",...}&limit=50
/// let limit = query.get("limit")              // "50"
/// ```
struct FormQuery: Sendable {
    /// The decoded pairs, in order.
    let pairs: [(name: String, value: String)]

    /// Decodes `query` (the text after `?`, without it); a malformed `%` escape is `400 bad_request`.
    init(_ query: String?) throws {
        var pairs: [(String, String)] = []
        for part in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let (name, value): (Substring, Substring)
            if let equals = part.firstIndex(of: "=") {
                (name, value) = (part[..<equals], part[part.index(after: equals)...])
            } else {
                (name, value) = (part, "")
            }
            pairs.append((try Self.decode(name), try Self.decode(value)))
        }
        self.pairs = pairs
    }

    /// The first value given for `name`, if any.
    func get(_ name: String) -> String? { pairs.first { $0.name == name }?.value }

    /// Every value given for `name`, in order (`?tag=a&tag=b`).
    func all(_ name: String) -> [String] { pairs.filter { $0.name == name }.map(\.value) }

    /// One form-encoded component: `+` becomes a space, then `%XX` escapes become bytes, which must be UTF-8.
    static func decode(_ component: Substring) throws -> String {
        guard component.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else { return String(component) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.utf8.count)
        var iterator = component.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue) else {
                    throw APIError.badRequest("The query string has a malformed % escape")
                }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw APIError.badRequest("The query string is not UTF-8 once decoded")
        }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension Request {
    /// The query string decoded as a form (`+` is a space); see ``FormQuery``.
    var formQuery: FormQuery {
        get throws { try FormQuery(uri.query) }
    }
}
