import CairnProtocol
import Foundation

/// `http-ranges`: `Range` (downloads), `Content-Range` (upload chunks) and `Upload-Offset` (the client). A `Range`
/// answer lies within the file and reads back the same from its canonical header; a `Content-Range` that reads
/// writes back to a header that reads equal, or is refused with an error; an `Upload-Offset` that reads is a
/// non-negative count that reads back equal from its canonical text.
enum HTTPRangesTarget {
    static func run(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return }
        // The first bytes choose the file size: small sizes often, huge ones sometimes.
        let size: Int64 = bytes[0] < 200 ? Int64(bytes[0]) : Int64(bytes[0]) << (Int64(bytes[1] % 56))
        let header = String(decoding: bytes.dropFirst(2), as: UTF8.self)

        switch HTTPRanges.answer(range: header, size: size) {
        case .whole: break
        case .unsatisfiable: break
        case .part(let range):
            require(range.lowerBound >= 0 && range.lowerBound < range.upperBound && range.upperBound <= size,
                    "Range \(header.debugDescription) of \(size) bytes answers \(range)")
            let canonical = "bytes=\(range.lowerBound)-\(range.upperBound - 1)"
            require(HTTPRanges.answer(range: canonical, size: size) == .part(range), "\(canonical) of \(size) bytes does not read back")
        }

        do {
            let contentRange = try ContentRange(header: header)
            require(contentRange.total >= 0, "\(header.debugDescription) reads to a negative total")
            let written: String
            if let span = contentRange.bytes {
                require(span.lowerBound >= 0 && span.upperBound < contentRange.total, "\(header.debugDescription) reads to a span outside the file")
                written = "bytes \(span.lowerBound)-\(span.upperBound)/\(contentRange.total)"
            } else {
                written = "bytes */\(contentRange.total)"
            }
            require((try? ContentRange(header: written)) == contentRange, "\(header.debugDescription) writes back as \(written), which reads differently")
        } catch is ErrorBody {
            // Refused as it should be: 422 naming the header.
        } catch {
            require(false, "Content-Range \(header.debugDescription) fails with \(error), not a validation error")
        }

        if let offset = UploadOffset.parse(header) {
            require(offset >= 0, "Upload-Offset \(header.debugDescription) reads to \(offset)")
            require(UploadOffset.parse(String(offset)) == offset, "Upload-Offset \(offset) does not read back")
        }
    }
}
