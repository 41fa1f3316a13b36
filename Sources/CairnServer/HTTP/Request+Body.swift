import CairnProtocol
import Foundation
import Hummingbird
import NIOCore

extension Request {
    /// Reads the body (at most `limit` bytes, else `413 payload_too_large`), parses it strictly as JSON and
    /// decodes `type`; malformed JSON is `400 bad_request`, a wrong shape `422 validation_failed`.
    func decodeBody<T: Decodable>(_ type: T.Type, context: CairnRequestContext, limit: Int = 1 << 20) async throws -> T {
        try JSONValueDecoder().decode(type, from: try await jsonBody(context: context, limit: limit))
    }

    /// Reads the body (at most `limit` bytes, else `413 payload_too_large`) and parses it strictly as JSON;
    /// malformed JSON is `400 bad_request`.
    func jsonBody(context: CairnRequestContext, limit: Int = 1 << 20) async throws -> JSONValue {
        var request = self
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError.tooLarge("The request body is larger than \(limit) bytes")
        }
        guard buffer.readableBytes > 0 else { throw APIError.badRequest("The request needs a JSON body") }
        return try buffer.withUnsafeReadableBytes { raw in try JSONValue(parsing: raw) }
    }
}

extension Response {
    /// A JSON response of a wire value.
    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        let data = try CairnJSON.encode(value)
        return .jsonBytes(ByteBuffer(bytes: data), status: status, headers: headers)
    }

    /// A response of JSON bytes already made.
    static func jsonBytes(_ buffer: ByteBuffer, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: buffer))
    }
}
