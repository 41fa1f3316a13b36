import CairnProtocol
import JWTKit

/// Every claim of an identity provider's JWT, as JSON. jwt-kit checks the signature; ``JWTVerifier`` checks the
/// claims itself so that each refusal can say which check failed.
struct IdentityClaims: JWTPayload {
    /// The claims by name.
    let values: [String: JSONValue]

    /// The claims every JWT may carry (RFC 7519), which are not handed to rules.
    static let registered: Set<String> = ["iss", "sub", "aud", "exp", "nbf", "iat", "jti"]

    init(from decoder: any Decoder) throws {
        self.values = try decoder.singleValueContainer().decode([String: JSONValue].self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values)
    }

    /// Nothing here: the claims are checked by ``JWTVerifier`` after the signature.
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    /// A numeric date claim (`exp`, `nbf`) in seconds since 1970, or `nil` when absent or not a number.
    func seconds(_ name: String) -> Double? {
        switch values[name] {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }
}
