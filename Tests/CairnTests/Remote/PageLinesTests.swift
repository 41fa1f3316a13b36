@testable import Cairn
import CairnProtocol
import Foundation
import NIOCore
import Synchronization
import Testing

/// Reading an answer of several pages as it arrives: whole lines only, whatever the chunks, plain or gzip.
@Suite("Pages read line by line as an answer arrives")
struct PageLinesTests {
    final class Collected: Sendable {
        let pages = Mutex<[String]>([])
        var all: [String] { pages.withLock { $0 } }
    }

    static let lines = (0..<40).map { #"{"changes":[],"cursor":"c\#($0)","hasMore":\#($0 < 39)}"# }

    func read(_ body: Data, chunk: Int, isStream: Bool) async throws -> [String] {
        let collected = Collected()
        let reader = PageLines(isStream: { isStream }) { page in collected.pages.withLock { $0.append(String(decoding: page, as: UTF8.self)) } }
        var offset = 0
        while offset < body.count {
            let end = min(offset + chunk, body.count)
            try await reader.append(body.subdata(in: offset..<end))
            offset = end
        }
        try await reader.finish()
        return collected.all
    }

    @Test("every page comes whole and in order, in chunks of any size, plain or gzip", arguments: [1, 7, 100, 4096, 1 << 20])
    func chunks(_ size: Int) async throws {
        let plain = Data((Self.lines.joined(separator: "\n") + "\n").utf8)
        #expect(try await read(plain, chunk: size, isStream: true) == Self.lines)
        // gzip flushed after each page, as the server writes it.
        let stream = try GzipStream()
        var packed = Data()
        for line in Self.lines {
            var buffer = ByteBuffer(string: line + "\n")
            packed.append(contentsOf: try stream.compress(&buffer).readableBytesView)
        }
        packed.append(contentsOf: try stream.finish().readableBytesView)
        #expect(try await read(packed, chunk: size, isStream: true) == Self.lines)
    }

    @Test("a stream cut in the middle of a page hands over the pages before it and refuses the cut one")
    func cut() async throws {
        let body = Data((Self.lines[0] + "\n" + Self.lines[1] + "\n" + Self.lines[2].prefix(10)).utf8)
        let collected = Collected()
        let reader = PageLines(isStream: { true }) { page in collected.pages.withLock { $0.append(String(decoding: page, as: UTF8.self)) } }
        try await reader.append(body)
        await #expect(throws: CairnError.self) { try await reader.finish() }
        #expect(collected.all == Array(Self.lines[0..<2]))
    }

    @Test("an answer of one page object, from a server before streams, is handed over at its end")
    func onePage() async throws {
        #expect(try await read(Data(Self.lines[5].utf8), chunk: 9, isStream: false) == [Self.lines[5]])
    }
}
