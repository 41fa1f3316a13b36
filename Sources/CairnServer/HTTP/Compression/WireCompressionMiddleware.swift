import CairnProtocol
import HTTPTypes
import Hummingbird
import NIOCore

/// gzip on the wire (PROTOCOL.md, Compression): reads gzip-compressed JSON request bodies, compresses JSON answers
/// for clients that send `Accept-Encoding: gzip`, and says on every answer that it accepts compressed bodies
/// (`Accept-Encoding: gzip`, RFC 7694) so clients know to compress theirs. File bytes and event streams pass as they
/// are: only `application/json` and pages streamed as `application/x-ndjson` are touched (each write of a stream is
/// flushed, so a client reads every page as soon as it arrives).
///
/// Turned off (`cairn serve --no-compression`), it answers in plain JSON and refuses compressed bodies with
/// `415 unsupported_media_type` and `Accept-Encoding: identity`.
struct WireCompressionMiddleware: RouterMiddleware {
    typealias Context = CairnRequestContext
    /// Whether the server compresses and reads compressed bodies.
    let enabled: Bool
    /// The largest request body taken, compressed or decompressed: the largest limit of any JSON route (a batch's).
    /// A route's own, smaller limit then applies to the decompressed body as to a plain one.
    let maximumBodyBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        let coding = request.headers[.contentEncoding]
        if !ContentCoding.isIdentity(coding) {
            request = try await decompressed(request, coding: coding)
        }
        var response = try await next(request, context)
        guard enabled else { return response }
        response.headers[.acceptEncoding] = ContentCoding.gzip
        if compresses(response, for: request) {
            response.headers[.contentEncoding] = ContentCoding.gzip
            response.headers[.contentLength] = nil
            response.headers[values: .vary].append("Accept-Encoding")
            response.body = response.body.gzipped()
        }
        return response
    }

    /// The request with its gzip body decompressed (at most ``maximumBodyBytes``, else `413`); any other coding, a
    /// body that is not JSON, or any coding at all when compression is off, answers `415`.
    private func decompressed(_ request: Request, coding: String?) async throws -> Request {
        guard enabled, ContentCoding.isGzip(coding), Self.isJSON(request.headers[.contentType]) else {
            throw APIError(
                .unsupportedMediaType, .unsupportedMediaType,
                enabled
                    ? "Only JSON bodies may be compressed, and only with gzip (Content-Encoding: \(coding ?? ""))"
                    : "This server does not read compressed bodies: send the body without Content-Encoding",
                headers: [.acceptEncoding: enabled ? ContentCoding.gzip : "identity"])
        }
        var request = request
        var compressed: ByteBuffer
        do {
            compressed = try await request.collectBody(upTo: maximumBodyBytes)
        } catch is NIOTooManyBytesError {
            throw APIError.tooLarge("The request body is larger than \(maximumBodyBytes) bytes")
        }
        do {
            let body = try Gzip.decompress(&compressed, limit: maximumBodyBytes)
            var head = request.head
            head.headerFields[.contentEncoding] = nil
            head.headerFields[.contentLength] = String(body.readableBytes)
            return Request(head: head, body: RequestBody(buffer: body))
        } catch .tooLarge {
            throw APIError.tooLarge("The request body expands past \(maximumBodyBytes) bytes")
        } catch {
            throw APIError.badRequest("The request body is not valid gzip")
        }
    }

    /// True for a JSON answer of at least ``Gzip/smallestWorthCompressing`` bytes (or of unknown length) to a
    /// client that accepts gzip.
    private func compresses(_ response: Response, for request: Request) -> Bool {
        guard request.method != .head, response.status != .noContent, response.status != .notModified,
            response.headers[.contentEncoding] == nil,
            Self.isJSON(response.headers[.contentType]) || PageStream.isStream(contentType: response.headers[.contentType]),
            ContentCoding.acceptsGzip(request.headers[.acceptEncoding])
        else { return false }
        return (response.body.contentLength ?? .max) >= Gzip.smallestWorthCompressing
    }

    static func isJSON(_ contentType: String?) -> Bool {
        contentType?.lowercased().hasPrefix("application/json") ?? false
    }
}

extension ResponseBody {
    /// This body compressed into one gzip stream as it is written.
    func gzipped() -> ResponseBody {
        let original = self
        return ResponseBody { writer in
            try await original.write(GzipBodyWriter(parent: writer, stream: try GzipStream()))
        }
    }
}

/// Compresses what is written through it into the parent writer, 64 KiB at a time so that a large page never holds a
/// thread for long (each slice goes out before the next is compressed); finishing ends the gzip stream.
private struct GzipBodyWriter: ResponseBodyWriter {
    var parent: any ResponseBodyWriter
    let stream: GzipStream
    static let slice = 64 * 1024

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        while buffer.readableBytes > 0 {
            var slice = buffer.readSlice(length: min(Self.slice, buffer.readableBytes))!
            let compressed = try stream.compress(&slice)
            if compressed.readableBytes > 0 { try await parent.write(compressed) }
            await Task.yield()
        }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await parent.write(try stream.finish())
        try await parent.finish(trailingHeaders)
    }
}
