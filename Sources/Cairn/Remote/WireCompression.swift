import CairnProtocol
import Foundation
import Synchronization

/// gzip on the wire, as the client does it (PROTOCOL.md, Compression): asks for compressed answers, reads them, and
/// compresses JSON bodies once the server has said it reads them (`Accept-Encoding: gzip` on any of its answers).
/// A server that refuses a compressed body (`415`) gets plain bodies from then on.
final class WireCompression: Sendable {
    /// Whether the client compresses at all (``CairnConfiguration/compression``).
    let enabled: Bool
    /// What the server said it reads: `nil` until it said anything; `false` for good once it refused a compressed body
    /// (a proxy in front may claim what the server behind it does not do).
    private let serverReadsGzip = Mutex<Bool?>(nil)
    private let refused = Mutex(false)
    /// The largest answer a compressed body may expand to.
    static let maximumAnswerBytes = 256 << 20

    init(enabled: Bool) {
        self.enabled = enabled
    }

    /// The headers and body of a JSON request: `Accept-Encoding: gzip`, and the body compressed when the server reads
    /// gzip and the body is large enough to gain from it (at zlib's fastest level: the device compresses while it
    /// writes its store).
    func prepare(body: Data?, headers: inout [(String, String)]) -> (body: Data?, compressed: Bool) {
        guard enabled else { return (body, false) }
        headers.append(("Accept-Encoding", ContentCoding.gzip))
        guard let body, body.count >= Gzip.smallestWorthCompressing, serverReadsGzip.withLock({ $0 }) == true,
            let packed = try? Gzip.compress(body, effort: .fast)
        else { return (body, false) }
        headers.append(("Content-Encoding", ContentCoding.gzip))
        return (packed, true)
    }

    /// Learns from an answer whether the server reads gzip bodies, and returns the answer with its body decompressed.
    /// A `415` to a compressed body means it does not (then the caller sends the body again, plain).
    func received(_ response: TransportResponse, sentCompressed: Bool) throws -> TransportResponse {
        guard enabled else { return response }
        if sentCompressed, response.status == 415 {
            refused.withLock { $0 = true }
            serverReadsGzip.withLock { $0 = false }
        } else if let accepted = response.header("Accept-Encoding"), !refused.withLock({ $0 }) {
            serverReadsGzip.withLock { $0 = ContentCoding.acceptsGzip(accepted) }
        }
        // URLSession decompresses by itself and keeps the header: only a body that still is gzip is read here.
        guard ContentCoding.isGzip(response.header("Content-Encoding")), Gzip.isCompressed(response.body) else { return response }
        var plain = response
        do {
            plain.body = try Gzip.decompress(response.body, limit: Self.maximumAnswerBytes)
        } catch {
            throw CairnError.badResponse("a compressed answer could not be read: \(error)", cause: error)
        }
        return plain
    }

    /// True when an answer refused a compressed body, so that the same request goes again uncompressed.
    static func refusedCompression(_ response: TransportResponse, sentCompressed: Bool) -> Bool {
        sentCompressed && response.status == 415
    }
}
