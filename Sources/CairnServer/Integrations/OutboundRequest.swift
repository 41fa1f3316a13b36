import AsyncHTTPClient
import Foundation
import NIOCore

/// One signed `POST` of JSON from the server to another system (a webhook's receiver, an action's backend): the body
/// with `Content-Type: application/json`, `Cairn-Signature` (``DeliverySignature``) and any extra headers, answered
/// within `timeout`.
///
/// ```swift
/// let answer = try await OutboundRequest(url: url, body: body, secret: secret, headers: ["Cairn-Delivery": id])
///     .send(timeout: .seconds(10))
/// if answer.isSuccess { ... }
/// ```
struct OutboundRequest: Sendable {
    /// Where to post.
    let url: String
    /// The exact bytes signed and sent.
    let body: Data
    /// The secret the signature is keyed with.
    let secret: String
    /// Headers besides the content type and signature.
    var headers: [String: String] = [:]

    /// What the other system answered.
    struct Answer: Sendable {
        /// The HTTP status.
        let status: Int
        /// The body, at most ``maximumAnswerBytes``.
        let body: Data
        /// Whether the status is 2xx.
        var isSuccess: Bool { (200..<300).contains(status) }
    }

    /// The largest answer read; a longer one fails the request.
    static let maximumAnswerBytes = 1 << 20

    /// Posts the body and reads the answer; throws when the system cannot be reached, does not answer within
    /// `timeout`, or answers more than ``maximumAnswerBytes``.
    func send(timeout: TimeAmount) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: DeliverySignature.headerName, value: DeliverySignature.header(for: body, secret: secret))
        request.headers.add(name: "User-Agent", value: "Cairn")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: Self.maximumAnswerBytes)
        return Answer(status: Int(response.status.code), body: Data(buffer: bytes))
    }
}
