/// One event of a Server-Sent Events stream: its `event:` name, its `data:` lines joined by newlines, and its
/// comments (`: connected`, `: keep-alive`).
package struct ServerSentEvent: Sendable, Equatable {
    /// The `event:` field, if any.
    package var name: String?
    /// The `data:` lines joined by `\n`; `nil` when the event has none.
    package var data: String?
    /// The comment lines, without their colon and the space after it.
    package var comments: [String]

    /// An event with these fields.
    package init(name: String? = nil, data: String? = nil, comments: [String] = []) {
        self.name = name
        self.data = data
        self.comments = comments
    }
}

/// Reads a Server-Sent Events stream chunk by chunk: ``feed(_:)`` returns the events the chunk completes (an event
/// ends at a blank line; a chunk may cut anywhere, even inside a UTF-8 character). The one reader of the live-notice
/// stream, for the client, the tests and the tool's benchmarks.
///
/// ```swift
/// var reader = ServerSentEvents()
/// for event in reader.feed(chunk) { if let data = event.data { handle(data) } }
/// ```
package struct ServerSentEvents: Sendable {
    private var buffer: [UInt8] = []
    private var event = ServerSentEvent()
    private var hasLines = false

    /// A reader at the start of a stream.
    package init() {}

    /// Takes the next bytes of the stream; returns the events they complete, in order.
    package mutating func feed(_ chunk: some Sequence<UInt8>) -> [ServerSentEvent] {
        buffer.append(contentsOf: chunk)
        var events: [ServerSentEvent] = []
        var start = 0
        while let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
            var end = newline
            if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            if let finished = take(buffer[start..<end]) { events.append(finished) }
            start = newline + 1
        }
        buffer.removeFirst(start)
        return events
    }

    /// Takes one line; returns the event a blank line ends.
    private mutating func take(_ line: ArraySlice<UInt8>) -> ServerSentEvent? {
        guard !line.isEmpty else {
            defer { (event, hasLines) = (ServerSentEvent(), false) }
            return hasLines ? event : nil
        }
        hasLines = true
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        var value = line[colon...].dropFirst()
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        let text = String(decoding: value, as: UTF8.self)
        switch String(decoding: line[..<colon], as: UTF8.self) {
        case "": event.comments.append(text)
        case "data": event.data = event.data.map { $0 + "\n" + text } ?? text
        case "event": event.name = text
        default: break
        }
        return nil
    }
}
