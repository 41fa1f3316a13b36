import CairnProtocol
import Crypto
import Foundation

/// The `Cairn-Signature` header of webhook deliveries and action calls: `sha256=` and the lowercase hex of the
/// HMAC-SHA256 of the request's exact body bytes, keyed with the webhook's (or the project's action) secret. A
/// receiver recomputes it over the bytes it received and compares in constant time.
///
/// ```swift
/// let header = DeliverySignature.header(for: body, secret: secret)      // "sha256=5f1c..."
/// DeliverySignature.isValid(header, for: body, secret: secret)          // true
/// ```
public enum DeliverySignature {
    /// The header's name.
    public static let headerName = "Cairn-Signature"

    /// The header value for `body` signed with `secret`.
    public static func header(for body: some DataProtocol, secret: String) -> String {
        "sha256=" + Hex.encode(HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8))))
    }

    /// Whether `header` is the signature of `body` with `secret` (compared in constant time).
    public static func isValid(_ header: String, for body: some DataProtocol, secret: String) -> Bool {
        guard header.hasPrefix("sha256="), let code = Hex.decode(String(header.dropFirst(7))) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: body, using: SymmetricKey(data: Data(secret.utf8)))
    }
}
