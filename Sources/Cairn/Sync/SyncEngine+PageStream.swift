import CairnProtocol
import Foundation

extension SyncEngine {
    /// Pages asked for in one answer (``PageStream``): enough that a first sync of a few hundred thousand records pays
    /// a round trip only a handful of times, few enough that an answer ends now and then on a long pull.
    static let pagesPerAnswer = 100
    /// Pages asked for in one answer through a transport that collects bodies whole (URLSession): the answer is then
    /// in memory at once, so it stays a few pages, while still paying a round trip once per 8 pages.
    static let pagesPerCollectedAnswer = 8

    /// The pull loop over answers of several pages: one request from the stored cursor, then each page applied with its
    /// cursor as it arrives while the next ones travel, so a link with a long round trip pays it once per answer, not
    /// once per page. After a cut, the next answer starts from the last cursor committed; an answer that stops with
    /// more to come is followed by another. When the source's next request is not the one the answer goes on with
    /// (a download query moving to its next phase), the answer is dropped and the source asked again.
    ///
    /// - Returns: false when the source had nothing to pull, true at its end, and `nil` when the server answered one
    ///   page (a server from before streams): the caller goes on page by page.
    func pullStreaming(
        from source: some PageSource, pageSize: Int, prefetched: PrefetchedAnswer? = nil, into summary: inout SyncSummary
    ) async throws -> Bool? {
        var expiredOnce = false
        var failures = 0
        var prefetched = prefetched
        defer { prefetched?.cancel() }
        while true {
            try Task.checkCancellation()
            try stopIfCancelled(.download)
            guard let first = try await store.offPool({ try source.nextRequest($0) }) else { return false }
            // The answer asked for ahead, when it asks for what the source needs now.
            let answer: PrefetchedAnswer
            if let ready = prefetched, ready.request == first {
                answer = ready
            } else {
                prefetched?.cancel()
                answer = prefetch(first, pageSize: pageSize)
            }
            prefetched = nil
            let (handoff, reader) = (answer.handoff, answer.reader)
            var request = first
            var applied = 0
            var ended = false
            let outcome: Result<Void, any Error>
            do {
                while let page = try await handoff.take() {
                    // cancelDownload(): every page applied so far stays, with its cursor.
                    try Task.checkCancellation()
                    try stopIfCancelled(.download)
                    try await apply(page, answering: request, from: source, into: &summary)
                    applied += 1
                    if source.isLast(page, of: request) {
                        ended = true
                        break
                    }
                    let expected = request.next(after: page)
                    guard let next = try await store.offPool({ try source.nextRequest($0) }), next.continues(expected) else { break }
                    request = next
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            reader.cancel()
            await handoff.close()
            let streamed = (try? await reader.value) ?? true
            switch outcome {
            case .success:
                if ended { return true }
                if !streamed { return nil }
                // An answer that ends without a page would be asked for again and again.
                guard applied > 0 || request != first else { throw CairnError.badResponse("an answer of pages carried none") }
                failures = 0
            case .failure(let error as CairnError) where error.code == .cursorExpired && !expiredOnce:
                expiredOnce = true
                let expired = request
                try await store.offPool { try source.restart(after: expired, $0) }
            case .failure(let error as CairnError) where error.isRetryable && error.retriesInPlace && !Task.isCancelled:
                // A cut after pages arrived costs nothing but the next request; one before any counts as a failure.
                if applied > 0 {
                    failures = 0
                    continue
                }
                failures += 1
                guard configuration.retry.shouldRetry(after: failures, refused: error.connectionRefused) else { throw error }
                let delay = configuration.retry.delay(beforeAttempt: failures + 1)
                log.requestRetried("GET", "/v1/projects/\(configuration.project)/collections/\(first.cursor.collection)/changes", attempt: failures + 1, in: delay, cause: error)
                try await api.clock.sleep(for: delay)
            case .failure(let error):
                throw error
            }
        }
    }

    /// Asks for the answer of `request` now: its pages wait in a handoff until the pull loop takes them.
    nonisolated func prefetch(_ request: PageRequest, pageSize: Int) -> PrefetchedAnswer {
        let handoff = PageHandoff(capacity: 2)
        return PrefetchedAnswer(request: request, handoff: handoff, reader: readPages(request, pageSize: pageSize, into: handoff))
    }

    /// Reads the pages of one answer into `handoff`, each scanned as it arrives; the task's value says whether the
    /// server streamed.
    private nonisolated func readPages(_ request: PageRequest, pageSize: Int, into handoff: PageHandoff) -> Task<Bool, any Error> {
        Task { [api, store, idle = configuration.requestTimeout] in
            do {
                let pages = api.transport.streamsResponseBodies ? Self.pagesPerAnswer : Self.pagesPerCollectedAnswer
                let streamed = try await api.changePages(request, limit: pageSize, pages: pages, idle: idle) { body in
                    await handoff.put(try store.scan(body, answering: request))
                }
                await handoff.finish(nil)
                return streamed
            } catch {
                await handoff.finish(error)
                throw error
            }
        }
    }
}

/// An answer of several pages asked for before the pull loop needs it (the next collections' first answers, while one
/// collection's pages arrive), so that a long round trip is not paid once per collection.
struct PrefetchedAnswer: Sendable {
    let request: PageRequest
    let handoff: PageHandoff
    let reader: Task<Bool, any Error>

    /// Stops reading it: it will not be used.
    func cancel() {
        reader.cancel()
        Task { await handoff.close() }
    }
}

extension PageRequest {
    /// True when this request asks for what `expected` does, whatever own writes each names (an answer already under
    /// way keeps the list it was asked with).
    func continues(_ expected: PageRequest) -> Bool {
        cursor == expected.cursor && since == expected.since && filter == expected.filter
    }
}
