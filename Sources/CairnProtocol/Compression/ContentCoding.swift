import Foundation

/// HTTP content codings (RFC 9110 §8.4) as Cairn uses them: `gzip` for JSON bodies, else `identity`.
public enum ContentCoding {
    /// The value of `Accept-Encoding` and `Content-Encoding` for gzip.
    public static let gzip = "gzip"

    /// True when an `Accept-Encoding` header value accepts gzip: `gzip` (or `x-gzip`, or `*`) with a quality above
    /// zero. `gzip;q=0` refuses it; a missing header accepts only `identity`.
    ///
    /// ```swift
    /// ContentCoding.acceptsGzip("gzip, deflate, br")   // true
    /// ContentCoding.acceptsGzip("identity")            // false
    /// ```
    public static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        var wildcard = false
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parts.first else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if coding == "gzip" || coding == "x-gzip" { return quality > 0 }
            if coding == "*" { wildcard = quality > 0 }
        }
        return wildcard
    }

    /// True for a `Content-Encoding` value that means gzip.
    public static func isGzip(_ header: String?) -> Bool {
        guard let value = header?.trimmingCharacters(in: .whitespaces).lowercased() else { return false }
        return value == "gzip" || value == "x-gzip"
    }

    /// True for a missing or `identity` `Content-Encoding`: the body is as it is.
    public static func isIdentity(_ header: String?) -> Bool {
        guard let value = header?.trimmingCharacters(in: .whitespaces).lowercased() else { return true }
        return value.isEmpty || value == "identity"
    }
}
