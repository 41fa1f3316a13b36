import CairnProtocol
import Foundation
import Logging
import Synchronization

/// Where a `cairn sync --timings` spends its time, from the SDK's own debug log (request traces and pulled pages),
/// each event stamped as it is logged: opening the store (signing in and fetching the schema among it), the sync up to
/// its first page, from the first page to the last, after the last page, and the rest of the command.
final class SyncTimings: Sendable {
    private struct Event {
        let at: ContinuousClock.Instant
        let message: String
        let metadata: Logger.Metadata
    }

    private let start = ContinuousClock.now
    private let events = Mutex<[Event]>([])
    private let marks = Mutex<[String: ContinuousClock.Instant]>([:])

    /// A logger at `debug` whose messages are kept here, to give to the client's configuration.
    var logger: Logger {
        var logger = Logger(label: "cairn.timings") { _ in Recorder(timings: self) }
        logger.logLevel = .debug
        return logger
    }

    /// Notes that the command reached `name`: `opened` (the store is open, the sync starts) or `synced`.
    func mark(_ name: String) { marks.withLock { $0[name] = .now } }

    fileprivate func record(_ message: String, _ metadata: Logger.Metadata) {
        let event = Event(at: .now, message: message, metadata: metadata)
        events.withLock { $0.append(event) }
    }

    /// The breakdown in milliseconds, as one JSON object: `totalMs` from the command's start to now; `openMs`, with
    /// `signInMs` and `schemaMs` (the requests' own times) inside it; `syncMs`, split into `toFirstPageMs`,
    /// `pagesMs` (first page to last) and `afterLastPageMs`; `finishMs` after the sync; `pages` and `requests`.
    func breakdown() -> JSONValue {
        let now = ContinuousClock.now
        let (events, marks) = (events.withLock { $0 }, marks.withLock { $0 })
        func ms(_ from: ContinuousClock.Instant?, _ to: ContinuousClock.Instant?) -> JSONValue {
            guard let from, let to else { return .null }
            return .number(BenchTiming.rounded(BenchTiming.seconds(to - from) * 1000))
        }
        func requestMs(_ matches: (String) -> Bool) -> JSONValue {
            let total = events.filter { $0.message == "request" && matches("\($0.metadata["cairn.path"] ?? "")") }
                .compactMap { Double("\($0.metadata["cairn.ms"] ?? "")") }.reduce(0, +)
            return .number(total)
        }
        let pages = events.filter { $0.message == "page pulled" }
        let opened = marks["opened"]
        let synced = marks["synced"]
        return .object([
            "totalMs": ms(start, now),
            "openMs": ms(start, opened),
            "signInMs": requestMs { $0.hasSuffix("/auth/login") || $0.hasSuffix("/auth/token") },
            "schemaMs": requestMs { $0.hasSuffix("/schema") },
            "syncMs": ms(opened, synced),
            "toFirstPageMs": ms(opened, pages.first?.at ?? synced),
            "pagesMs": ms(pages.first?.at, pages.last?.at),
            "afterLastPageMs": ms(pages.last?.at ?? opened, synced),
            "finishMs": ms(synced, now),
            "pages": .integer(Int64(pages.count)),
            "requests": .integer(Int64(events.filter { $0.message == "request" }.count)),
        ])
    }

    /// Keeps every message the SDK logs, with the instant it was logged.
    private struct Recorder: LogHandler {
        let timings: SyncTimings
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            timings.record("\(event.message)", event.metadata ?? [:])
        }
    }
}
