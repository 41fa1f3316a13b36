import CairnProtocol
import Foundation
import NIOCore

/// `gzip`: inflation under a size limit. What inflates never exceeds its limit, and a stream refused as too large at
/// one limit inflates past it (or is corrupt) under a larger one; the chunked inflater gives the same bytes as the
/// whole one; and the input itself, compressed (whole, and as a stream of chunks), inflates back to itself at
/// exactly its own size and is refused one byte below.
enum GzipTarget {
    static func run(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let body = Data(bytes.dropFirst())
        let limit = Int(first) * 37

        do {
            let plain = try Gzip.decompress(body, limit: limit)
            require(plain.count <= limit, "inflated \(plain.count) bytes past the limit \(limit)")
            let streamed = inflateInChunks(body, cut: Int(first % 7) + 1)
            require(streamed.map { $0.starts(with: plain) } ?? false, "the chunked inflater reads \(body.count) bytes differently")
        } catch .tooLarge(let reported) {
            require(reported == limit, "too large reports limit \(reported), not \(limit)")
            do {
                let larger = try Gzip.decompress(body, limit: 1 << 20)
                require(larger.count > limit, "refused as larger than \(limit) bytes, inflates to \(larger.count)")
            } catch {}
        } catch {}

        for effort in [Gzip.Effort.balanced, .fast] {
            guard let packed = try? Gzip.compress(body, effort: effort) else { return require(false, "\(body.count) bytes do not compress") }
            require(Gzip.isCompressed(packed), "compressed bytes do not start with gzip's magic")
            require((try? Gzip.decompress(packed, limit: body.count)) == body, "\(body.count) bytes do not inflate back at their own size")
            if !body.isEmpty {
                require((try? Gzip.decompress(packed, limit: body.count - 1)) == nil, "\(body.count) bytes inflate under a limit one byte smaller")
            }
        }
        guard let stream = try? GzipStream() else { return require(false, "a gzip stream does not start") }
        var packed = Data()
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + Int(first % 64) + 1)
            var chunk = ByteBuffer(bytes: body[(body.startIndex + offset)..<(body.startIndex + end)])
            guard let part = try? stream.compress(&chunk) else { return require(false, "a chunk does not compress") }
            packed.append(contentsOf: part.readableBytesView)
            offset = end
        }
        guard let tail = try? stream.finish() else { return require(false, "a gzip stream does not finish") }
        packed.append(contentsOf: tail.readableBytesView)
        require((try? Gzip.decompress(packed, limit: body.count)) == body, "\(body.count) bytes compressed in chunks do not inflate back")
        require(inflateInChunks(packed, cut: Int(first % 5) + 1) == body, "the chunked inflater does not read a stream back")
    }

    /// What `GunzipStream` makes of `data` fed `cut` bytes at a time, or `nil` when it refuses it.
    static func inflateInChunks(_ data: Data, cut: Int) -> Data? {
        guard let inflater = try? GunzipStream() else { return nil }
        var plain = Data()
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + cut)
            guard let part = try? inflater.decompress(data[(data.startIndex + offset)..<(data.startIndex + end)]) else { return nil }
            plain.append(part)
            offset = end
        }
        return plain
    }
}
