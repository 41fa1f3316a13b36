import CairnProtocol
import Crypto
import CryptoExtras
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// An identity provider for tests: keys in the three accepted algorithms (made with swift-crypto, not with the
/// library the server verifies with), the JWKS of their public halves, and JWTs signed with them.
struct TestIdentityProvider: Sendable {
    static let issuer = "https://login.example.test/"
    static let audience = "cairn-tests"

    /// A signing key and the JWK of its public half.
    struct Key: Sendable {
        let kid: String
        let algorithm: String
        let jwk: JSONValue
        let sign: @Sendable (Data) throws -> Data
    }

    let rsa: Key
    let ec: Key
    let ed: Key

    init() throws {
        let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try rsaKey.publicKey.getKeyPrimitives()
        rsa = Key(
            kid: "rsa-1", algorithm: "RS256",
            jwk: ["kty": "RSA", "kid": "rsa-1", "use": "sig", "n": .string(Self.base64URL(primitives.modulus)),
                  "e": .string(Self.base64URL(primitives.publicExponent))],
            sign: { try rsaKey.signature(for: $0, padding: .insecurePKCS1v1_5).rawRepresentation })
        let ecKey = P256.Signing.PrivateKey()
        let point = ecKey.publicKey.x963Representation.dropFirst()
        ec = Key(
            kid: "ec-1", algorithm: "ES256",
            jwk: ["kty": "EC", "kid": "ec-1", "crv": "P-256", "x": .string(Self.base64URL(point.prefix(32))),
                  "y": .string(Self.base64URL(point.suffix(32)))],
            sign: { try ecKey.signature(for: $0).rawRepresentation })
        let edKey = Curve25519.Signing.PrivateKey()
        ed = Key(
            kid: "ed-1", algorithm: "EdDSA",
            jwk: ["kty": "OKP", "kid": "ed-1", "crv": "Ed25519", "x": .string(Self.base64URL(edKey.publicKey.rawRepresentation))],
            sign: { try edKey.signature(for: $0) })
    }

    /// The JWKS of `keys` (all three by default).
    func jwks(_ keys: [Key]? = nil) -> Data {
        Self.json(["keys": .array((keys ?? [rsa, ec, ed]).map(\.jwk))])
    }

    /// Claims that pass every check at `now`, for `user`, with `extra` added (a `nil` value removes a claim).
    static func claims(_ user: String, now: Date, _ extra: [String: JSONValue?] = [:]) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(audience), "sub": .string(user),
            "exp": .integer(Int64(now.timeIntervalSince1970) + 300), "iat": .integer(Int64(now.timeIntervalSince1970)),
        ]
        for (name, value) in extra { claims[name] = value }
        return claims
    }

    /// A JWT of `claims` signed with `key`; `header` entries replace the usual `alg`, `kid` and `typ`.
    static func token(_ claims: [String: JSONValue], key: Key, header: [String: JSONValue] = [:]) throws -> String {
        var fields: [String: JSONValue] = ["alg": .string(key.algorithm), "kid": .string(key.kid), "typ": "JWT"]
        for (name, value) in header { fields[name] = value }
        let input = base64URL(json(.object(fields))) + "." + base64URL(json(.object(claims)))
        return input + "." + base64URL(try key.sign(Data(input.utf8)))
    }

    /// A token whose header names `algorithm` and whose signature is made by `sign` over the usual input.
    static func token(_ claims: [String: JSONValue], algorithm: String, kid: String, sign: (Data) -> Data) -> String {
        let header: JSONValue = ["alg": .string(algorithm), "kid": .string(kid), "typ": "JWT"]
        let input = base64URL(json(header)) + "." + base64URL(json(.object(claims)))
        return input + "." + base64URL(sign(Data(input.utf8)))
    }

    static func json(_ value: JSONValue) -> Data { Data(value.jsonText().utf8) }

    static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A JWKS served over HTTP on a free loopback port, whose document the test may change, counting its fetches.
final class JWKSServer: Sendable {
    private let document: Mutex<Data>
    private let fetches = Atomic<Int>(0)
    private let task: Mutex<Task<Void, any Error>?> = Mutex(nil)
    private let port = Mutex(0)

    /// The JWKS's URL.
    var url: String { "http://127.0.0.1:\(port.withLock { $0 })/jwks.json" }

    /// The times the JWKS was fetched.
    var fetchCount: Int { fetches.load(ordering: .relaxed) }

    /// A server of `jwks`, listening once ``start()`` returns.
    init(_ jwks: Data) { document = Mutex(jwks) }

    /// Serves `jwks` from now on.
    func serve(_ jwks: Data) { document.withLock { $0 = jwks } }

    /// Starts listening; returns once the port is bound.
    func start() async throws {
        let router = Router()
        router.get("jwks.json") { _, _ -> Response in
            self.fetches.add(1, ordering: .relaxed)
            let body = self.document.withLock { $0 }
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "max-age=600"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: Logger(label: "jwks") { _ in SwiftLogNoOpLogHandler() })
        task.withLock { $0 = Task { try await application.runService(gracefulShutdownSignals: []) } }
        var iterator = ports.makeAsyncIterator()
        let bound = await iterator.next() ?? 0
        port.withLock { $0 = bound }
    }

    /// Stops listening.
    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = await running?.result
    }
}
