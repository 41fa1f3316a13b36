import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The answer to a download of a completed file, for members and for public reads alike: the bytes streamed from
/// the blob store, one `Range`, `ETag` and `If-None-Match`.
enum FileDownload {
    static func response(_ file: StoredFile, request: Request, blobs: any BlobStore, metrics: ServerMetrics) throws -> Response {
        guard file.status == .completed else {
            throw ErrorBody(code: .fileNotReady, message: "File \(file.id) is \(file.status.rawValue): only completed files can be downloaded")
        }
        let etag = "\"\(file.sha256 ?? file.id)\""
        var headers: HTTPFields = [
            .eTag: etag, .acceptRanges: "bytes", .contentType: file.contentType,
            .contentDisposition: contentDisposition(file.name),
        ]
        if request.ifNoneMatch(etag) { return Response(status: .notModified, headers: headers) }
        let range: Range<Int64>
        let status: HTTPResponse.Status
        switch HTTPRanges.answer(range: request.headers[.range], size: file.size) {
        case .whole:
            (range, status) = (0..<file.size, .ok)
        case .part(let part):
            (range, status) = (part, .partialContent)
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(file.size)"
        case .unsatisfiable:
            throw APIError(
                .rangeNotSatisfiable, .rangeNotSatisfiable, "The file has \(file.size) bytes; the range asks past its end",
                headers: [.contentRange: "bytes */\(file.size)"])
        }
        let (project, id) = (file.project, file.id)
        let body = ResponseBody(contentLength: Int(range.count)) { writer in
            try await blobs.read(project: project, id: id, range: range) { chunk in
                try await writer.write(chunk)
                metrics.fileBytes(out: Int64(chunk.readableBytes))
            }
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// `attachment` with the name: an ASCII stand-in (`_` for anything else) and the exact name in UTF-8 (RFC 6266).
    static func contentDisposition(_ name: String) -> String {
        let plain = String(name.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && scalar.value >= 0x20 && scalar != "\"" && scalar != "\\" && scalar.value != 0x7F ? Character(scalar) : "_"
        })
        return "attachment; filename=\"\(plain)\"; filename*=UTF-8''\(PercentEncoding.encode(name))"
    }
}
