import CairnProtocol
import Foundation

/// Reads an answer of several changes pages (``PageStream``) as its chunks arrive: decompresses it when it is gzip
/// (told by its first bytes: JSON never starts with gzip's magic, and URLSession may have decompressed it already),
/// splits it at newlines and hands over each whole page. A page cut off by a broken connection is never handed over.
/// An answer of one page object (an older server, or a transport that collected the body) is handed over at the end.
///
/// Used by one task at a time, chunk after chunk.
final class PageLines: @unchecked Sendable {
    private let isStream: @Sendable () -> Bool
    private let page: @Sendable (Data) async throws -> Void
    private let limit: Int
    private var inflater: GunzipStream?
    private var started = false
    /// The first bytes, until there are two to tell gzip by.
    private var head = Data()
    /// The bytes after the last newline (a `Data` whose indices start at 0).
    private var pending = Data()

    /// - Parameters:
    ///   - isStream: whether the answer's head said `application/x-ndjson` (read once the body ends).
    ///   - limit: the largest page accepted.
    ///   - page: takes each page's JSON bytes, in order.
    init(limit: Int = WireCompression.maximumAnswerBytes, isStream: @escaping @Sendable () -> Bool, page: @escaping @Sendable (Data) async throws -> Void) {
        self.isStream = isStream
        self.limit = limit
        self.page = page
    }

    /// Takes the next chunk of the body, handing over every page it completes.
    func append(_ chunk: Data) async throws {
        var chunk = chunk
        if !started {
            // gzip is told by two bytes, which may come in chunks of their own.
            head.append(chunk)
            guard head.count >= 2 else { return }
            started = true
            chunk = head
            head = Data()
            if Gzip.isCompressed(chunk) { inflater = try Self.inflater() }
        }
        if let inflater {
            do { chunk = try inflater.decompress(chunk) } catch { throw CairnError.badResponse("a compressed page could not be read: \(error)", cause: error) }
        }
        // Only the new bytes are searched for newlines: the ones before were searched already.
        var searched = pending.count
        pending.append(chunk)
        var start = 0
        while let newline = Self.newline(in: pending, from: searched) {
            if newline > start { try await page(pending.subdata(in: start..<newline)) }
            start = newline + 1
            searched = start
        }
        if start > 0 { pending.removeSubrange(0..<start) }
        guard pending.count <= limit else { throw CairnError.badResponse("a page of the answer is larger than \(limit) bytes") }
    }

    /// The offset of the first newline of `bytes` at or after `offset` (a `Data` that starts at index 0).
    private static func newline(in bytes: Data, from offset: Int) -> Int? {
        guard offset < bytes.count else { return nil }
        return bytes.withUnsafeBytes { raw -> Int? in
            guard let base = raw.baseAddress, let found = memchr(base + offset, Int32(UInt8(ascii: "\n")), raw.count - offset) else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
    }

    /// The body ended: an answer of one page object is handed over now; a stream must have ended with its last line.
    func finish() async throws {
        if !started, !head.isEmpty {
            // An answer of one byte: whatever it is, it is read as it came.
            pending = head
            head = Data()
        }
        guard !pending.isEmpty else { return }
        guard !isStream() else { throw CairnError.badResponse("the answer's last page was cut off") }
        let body = pending
        pending = Data()
        try await page(body)
    }

    private static func inflater() throws -> GunzipStream {
        do { return try GunzipStream() } catch { throw CairnError.badResponse("a compressed answer could not be read: \(error)", cause: error) }
    }
}
