import CairnProtocol

/// `sse`: the Server-Sent Events reader. The stream cut at arbitrary chunk boundaries (chosen by the input's first
/// bytes, and byte by byte) gives the same events as fed whole; events written back as SSE text read back equal
/// (when their texts hold no `\r`, which SSE cannot carry at a line's end).
enum SSETarget {
    static func run(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let cuts = Array(bytes.prefix(8)).map { Int($0 % 16) + 1 }
        let stream = Array(bytes.dropFirst(min(8, bytes.count)))
        var whole = ServerSentEvents()
        let expected = whole.feed(stream)

        var chunked = ServerSentEvents()
        var events: [ServerSentEvent] = []
        var start = 0, turn = 0
        while start < stream.count {
            let end = min(stream.count, start + cuts[turn % cuts.count])
            events += chunked.feed(stream[start..<end])
            start = end
            turn += 1
        }
        require(events == expected, "chunks \(cuts) read \(show(stream)) differently")

        var single = ServerSentEvents()
        var one: [ServerSentEvent] = []
        for byte in stream { one += single.feed([byte]) }
        require(one == expected, "bytes one by one read \(show(stream)) differently")

        let texts = expected.flatMap { [$0.name ?? "", $0.data ?? ""] + $0.comments }
        guard !texts.contains(where: { $0.contains("\r") }) else { return }
        var written: [UInt8] = []
        for event in expected {
            // A line of a field the reader ignores still makes an event.
            if event.name == nil, event.data == nil, event.comments.isEmpty { written += Array("id: 1\n".utf8) }
            for comment in event.comments { written += Array(": \(comment)\n".utf8) }
            if let name = event.name { written += Array("event: \(name)\n".utf8) }
            if let data = event.data {
                for line in data.split(separator: "\n", omittingEmptySubsequences: false) { written += Array("data: \(line)\n".utf8) }
            }
            written += Array("\n".utf8)
        }
        var reader = ServerSentEvents()
        let reread = reader.feed(written)
        require(reread == expected, "events of \(show(stream)) written back as \(show(written)) read differently")
    }
}
