import CairnProtocol
import Foundation
import Synchronization

extension RemoteAPI {
    /// Up to `pages` pages of the changes feed in one answer (``PageStream``): each page's JSON is handed to `page` as
    /// soon as it has arrived whole, in order, while the next ones still travel. One attempt, never retried here: pages
    /// handed over must not come twice, so the caller goes on from the last cursor it committed. The answer may take
    /// as long as it needs; `idle` says how long it may go without a byte (then `timed_out`).
    ///
    /// - Returns: whether the server answered with a stream (`false`: one page object, as servers before streams do).
    func changePages(
        _ request: PageRequest, limit: Int, pages: Int, idle: Duration, page: @escaping @Sendable (Data) async throws -> Void
    ) async throws -> Bool {
        let path = try changesPath(
            collection: request.cursor.collection, since: request.since, limit: limit, filter: request.filter, own: request.own, pages: pages)
        let watch = AnswerWatch()
        let lines = PageLines(isStream: { watch.isStream }, page: page)
        let exchange = Task {
            _ = try await send(
                method: "GET", path: path, retries: false,
                head: { _, headers in watch.contentType.withLock { $0 = TransportResponse.header("Content-Type", in: headers) } },
                streamed: Streamed(chunk: { chunk in
                    watch.arrivals.add(1, ordering: .relaxed)
                    try await lines.append(chunk)
                }, timeout: .seconds(3600 * 24)))
            try await lines.finish()
        }
        // A watchdog in place of a deadline: the answer fails once a whole `idle` passed with nothing arriving.
        let watchdog = Task { [clock] in
            var seen = -1
            while !Task.isCancelled {
                try await clock.sleep(for: idle)
                let now = watch.arrivals.load(ordering: .relaxed)
                if now == seen {
                    watch.stalled.store(true, ordering: .relaxed)
                    exchange.cancel()
                    return
                }
                seen = now
            }
        }
        defer { watchdog.cancel() }
        do {
            try await withTaskCancellationHandler { try await exchange.value } onCancel: { exchange.cancel() }
        } catch where watch.stalled.load(ordering: .relaxed) {
            throw CairnError(.timedOut, "The server sent nothing for \(idle) in the middle of its pages", isRetryable: true, cause: error)
        }
        return watch.isStream
    }
}

/// What one answer of pages showed so far: its `Content-Type`, how many chunks arrived, and whether it stalled.
private final class AnswerWatch: Sendable {
    let contentType = Mutex<String?>(nil)
    let arrivals = Atomic<Int>(0)
    let stalled = Atomic<Bool>(false)

    var isStream: Bool { PageStream.isStream(contentType: contentType.withLock { $0 }) }
}
