import Foundation

/// Percent-encoding for URL query values and RFC 6266 file names: everything but RFC 3986's unreserved characters
/// (`A-Z a-z 0-9 - . _ ~`) is escaped, UTF-8 byte by byte.
///
/// ```swift
/// PercentEncoding.encode("a b&c")   // "a%20b%26c"
/// ```
package enum PercentEncoding {
    /// RFC 3986's unreserved characters.
    package static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `value` with every character outside ``unreserved`` percent-encoded.
    package static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value
    }
}
