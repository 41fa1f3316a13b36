import CompressNIO
import Foundation
import NIOCore

/// gzip (RFC 1952) through zlib, for JSON bodies on the wire: the server compresses answers for clients that accept
/// it and reads compressed request bodies; the SDK does the reverse. File bytes are never recompressed.
///
/// ```swift
/// let packed = try Gzip.compress(Data(json.utf8))
/// let json = try Gzip.decompress(packed, limit: 10 << 20)   // GzipError.tooLarge past 10 MB
/// ```
public enum Gzip {
    /// zlib's level 4, the fastest with lazy matching: on JSON pages close to level 6's size (0.23 of the plain bytes on varied notes against 0.22) at two to three times its speed, so
    /// compressing keeps up with a pull on loopback while slow links get most of the saving.
    static let configuration = ZlibConfiguration(compressionLevel: 4)

    /// How hard zlib works on a body.
    public enum Effort: Sendable {
        /// Level 4 (``configuration``): pages and answers, where the bytes on a slow link matter most.
        case balanced
        /// Level 1: uploads, which the sending device compresses while it also writes its store. On a batch of the
        /// bench's records about half the CPU of level 4, for 0.26 of the plain bytes against 0.245.
        case fast

        var configuration: ZlibConfiguration {
            switch self {
            case .balanced: Gzip.configuration
            case .fast: ZlibConfiguration(compressionLevel: 1)
            }
        }
    }

    /// Bodies smaller than this are sent as they are: the gzip frame and the CPU would cost more than they save.
    public static let smallestWorthCompressing = 1024

    /// True when `bytes` start with gzip's two magic bytes (`1f 8b`); JSON text never does.
    public static func isCompressed(_ bytes: Data) -> Bool {
        bytes.count >= 2 && bytes[bytes.startIndex] == 0x1f && bytes[bytes.startIndex + 1] == 0x8b
    }

    /// The gzip stream of `data`.
    public static func compress(_ data: Data, effort: Effort = .balanced) throws(GzipError) -> Data {
        var buffer = ByteBuffer(bytes: data)
        return Data(try compress(&buffer, effort: effort).readableBytesView)
    }

    /// The gzip stream of the readable bytes of `buffer` (which it consumes).
    public static func compress(_ buffer: inout ByteBuffer, effort: Effort = .balanced) throws(GzipError) -> ByteBuffer {
        do {
            return try buffer.compress(with: .gzip(configuration: effort.configuration))
        } catch {
            throw .corrupt
        }
    }

    /// The bytes a gzip stream holds, refusing to produce more than `limit`: a small body that would expand past it
    /// (a compression bomb) stops there with ``GzipError/tooLarge`` rather than filling memory.
    public static func decompress(_ data: Data, limit: Int) throws(GzipError) -> Data {
        var buffer = ByteBuffer(bytes: data)
        return Data(try decompress(&buffer, limit: limit).readableBytesView)
    }

    /// ``decompress(_:limit:)-(Data,_)`` on the readable bytes of `buffer` (which it consumes).
    public static func decompress(_ buffer: inout ByteBuffer, limit: Int) throws(GzipError) -> ByteBuffer {
        // The stream's last four bytes give its size (RFC 1952's ISIZE): one buffer of that size takes it whole, where
        // growing buffers and joining them would hold it two to three times over. A size that lies is caught by the
        // buffer running out, and the stream is read again the slow way.
        if let size = declaredSize(buffer), size <= limit {
            var input = buffer
            var output = ByteBufferAllocator().buffer(capacity: size + 64)
            // Only a stream that expands to exactly the size it declares is taken so: the buffer may have room for more.
            if (try? input.decompress(to: &output, with: .gzip())) != nil, input.readableBytes == 0, output.readableBytes == size {
                buffer = input
                return output
            }
        }
        do {
            // compress-nio refuses once the output reaches its maximum: one byte more than allowed tells "too large".
            let output = try buffer.decompress(with: .gzip(), maxSize: limit == .max ? limit : limit + 1)
            guard output.readableBytes <= limit else { throw GzipError.tooLarge(limit: limit) }
            return output
        } catch let error as GzipError {
            throw error
        } catch let error as CompressNIOError where error == .bufferOverflow {
            throw .tooLarge(limit: limit)
        } catch {
            throw .corrupt
        }
    }
}

extension Gzip {
    /// The size a gzip stream says it expands to (modulo 2^32, from its last four bytes, little-endian), or `nil` for
    /// a body too short to be gzip.
    static func declaredSize(_ buffer: ByteBuffer) -> Int? {
        guard buffer.readableBytes >= 18,
            let size = buffer.getInteger(at: buffer.readerIndex + buffer.readableBytes - 4, endianness: .little, as: UInt32.self)
        else { return nil }
        return Int(size)
    }
}

/// Compresses a body that arrives in chunks into one gzip stream, chunk by chunk (a server's streamed answer).
public final class GzipStream {
    private let compressor: any NIOCompressor

    /// Starts a stream.
    public init() throws(GzipError) {
        compressor = CompressionAlgorithm.gzip(configuration: Gzip.configuration).compressor
        do { try compressor.startStream() } catch { throw .corrupt }
    }

    /// The compressed bytes for `chunk`, flushed so that a reader can decompress everything sent so far.
    public func compress(_ chunk: inout ByteBuffer) throws(GzipError) -> ByteBuffer {
        do {
            return try chunk.compressStream(with: compressor, flush: .sync)
        } catch {
            throw .corrupt
        }
    }

    /// The stream's last bytes (its end and checksum); the stream cannot be used after.
    public func finish() throws(GzipError) -> ByteBuffer {
        var output = ByteBuffer()
        output.reserveCapacity(64)
        do {
            while true {
                do {
                    try compressor.finishDeflate(to: &output)
                    break
                } catch let error as CompressNIOError where error == .bufferOverflow {
                    output.reserveCapacity(output.capacity * 2)
                }
            }
            try compressor.finishStream()
        } catch {
            throw .corrupt
        }
        return output
    }
}

/// Decompresses a gzip stream that arrives in chunks, chunk by chunk: each call gives what the bytes so far expand to
/// (a client reading pages that a server flushes one by one).
///
/// ```swift
/// let inflater = try GunzipStream()
/// for chunk in chunks { plain.append(try inflater.decompress(chunk)) }
/// ```
public final class GunzipStream {
    private let decompressor: any NIODecompressor

    /// Starts reading a stream.
    public init() throws(GzipError) {
        decompressor = CompressionAlgorithm.gzip().decompressor
        do { try decompressor.startStream() } catch { throw .corrupt }
    }

    deinit { try? decompressor.finishStream() }

    /// The bytes `chunk` adds to the stream once decompressed (possibly none yet).
    public func decompress(_ chunk: Data) throws(GzipError) -> Data {
        var input = ByteBuffer(bytes: chunk)
        var plain = Data()
        while input.readableBytes > 0 {
            let before = input.readableBytes
            var output = ByteBufferAllocator().buffer(capacity: max(64 * 1024, before * 4))
            do {
                try input.decompressStream(to: &output, with: decompressor)
            } catch let error as CompressNIOError where error == .bufferOverflow {
                // The output filled: what it holds is kept, and the rest of the input goes round again.
            } catch {
                throw .corrupt
            }
            plain.append(contentsOf: output.readableBytesView)
            if input.readableBytes == before, output.readableBytes == 0 { break }
        }
        return plain
    }
}

/// Why a gzip body could not be read.
public enum GzipError: Error, Sendable, Equatable, CustomStringConvertible {
    /// It would expand past `limit` bytes.
    case tooLarge(limit: Int)
    /// It is not a complete gzip stream.
    case corrupt

    public var description: String {
        switch self {
        case .tooLarge(let limit): "the compressed body expands past \(limit) bytes"
        case .corrupt: "the body is not valid gzip"
        }
    }
}
