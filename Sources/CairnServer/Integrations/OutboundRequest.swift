import CairnProtocol
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

    /// The client every outbound request goes through: it follows no redirect (a redirected POST would become a GET
    /// without the body, and its 2xx would count as delivered), so a 3xx is answered as it came.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Posts the body and reads the whole answer within `timeout` (the body too: a system that sends its headers and
    /// stalls does not hold a delivery open); throws when the system cannot be reached, does not answer in time, or
    /// answers more than ``maximumAnswerBytes``.
    func send(timeout: TimeAmount) async throws -> Answer {
        try await withThrowingTaskGroup(of: Answer?.self) { group in
            group.addTask { try await exchange(timeout: timeout) }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(max(0, timeout.nanoseconds)))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let answer = first else {
                throw ErrorBody(code: .unavailable, message: "no whole answer within \(timeout.nanoseconds / 1_000_000) ms")
            }
            return answer
        }
    }

    private func exchange(timeout: TimeAmount) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: DeliverySignature.headerName, value: DeliverySignature.header(for: body, secret: secret))
        request.headers.add(name: "User-Agent", value: "Cairn")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await Self.client.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: Self.maximumAnswerBytes)
        return Answer(status: Int(response.status.code), body: Data(buffer: bytes))
    }
}
