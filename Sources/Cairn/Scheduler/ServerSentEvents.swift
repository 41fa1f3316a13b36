import Foundation

/// Reads a Server-Sent Events stream chunk by chunk: ``feed(_:)`` returns the `data:` payloads of the events the
/// chunk completes (an event ends at a blank line; chunks may cut anywhere).
///
/// ```swift
/// var reader = ServerSentEvents()
/// for payload in reader.feed(chunk) { handle(payload) }
/// ```
struct ServerSentEvents {
    private var buffer = ""

    mutating func feed(_ chunk: Data) -> [String] {
        buffer += String(decoding: chunk, as: UTF8.self)
        var payloads: [String] = []
        while let end = buffer.range(of: "\n\n") {
            let event = String(buffer[..<end.lowerBound])
            buffer.removeSubrange(..<end.upperBound)
            for line in event.split(separator: "\n") where line.hasPrefix("data:") {
                payloads.append(line.dropFirst(5).trimmingCharacters(in: .whitespaces))
            }
        }
        return payloads
    }
}
