import Synchronization

/// The pages of one pull asked for ahead of the one being applied, each asked for as soon as the page before it
/// named its cursor, which the server puts in its answer's head (`Cairn-Cursor`) so that the next request leaves
/// while this page's body still travels. On a slow link the round trips then overlap the transfer instead of adding
/// up page after page.
///
/// How many pages may be ahead is `depth()`, read whenever one could start: one keeps memory at two pages (the one
/// applied, the one ahead), which is all loopback and fast links need; on a link with long round trips the pull
/// allows two, so the link keeps carrying a page while the device writes another.
final class PagePipeline: Sendable {
    /// Starts downloading and reading a page; its answer's head may name the next one (``prefetch(_:)``).
    typealias Fetch = @Sendable (PageRequest, PagePipeline) -> Task<PulledPage, any Error>

    private struct State {
        /// The pages asked for ahead, in order, not yet taken by the pull loop.
        var ahead: [(request: PageRequest, page: Task<PulledPage, any Error>)] = []
        /// The page after them, asked for once the loop takes one.
        var waiting: PageRequest?
        var closed = false

        mutating func cancelAll() {
            for page in ahead { page.page.cancel() }
            ahead = []
            waiting = nil
        }
    }

    private let fetch: Fetch
    private let depth: @Sendable () -> Int
    private let state = Mutex(State())

    init(depth: @escaping @Sendable () -> Int = { 1 }, fetch: @escaping Fetch) {
        self.fetch = fetch
        self.depth = depth
    }

    /// The page for `request`: the first one asked for ahead when it is that one (the waiting page is then asked
    /// for, if known), else a new download, dropping anything asked for ahead (the cursors moved another way: a
    /// resync).
    func take(_ request: PageRequest) -> Task<PulledPage, any Error> {
        state.withLock { state in
            if let first = state.ahead.first, first.request == request {
                state.ahead.removeFirst()
                if let waiting = state.waiting, state.ahead.count < max(depth(), 1) {
                    state.ahead.append((waiting, fetch(waiting, self)))
                    state.waiting = nil
                }
                return first.page
            }
            state.cancelAll()
            return fetch(request, self)
        }
    }

    /// Asks for `request` ahead: now when fewer pages than the depth are ahead, else once the loop takes one. Asking
    /// again for a page already asked for does nothing.
    func prefetch(_ request: PageRequest) {
        state.withLock { state in
            guard !state.closed, !state.ahead.contains(where: { $0.request == request }), state.waiting != request else { return }
            if state.ahead.count < max(depth(), 1) {
                state.ahead.append((request, fetch(request, self)))
            } else {
                state.waiting = request
            }
        }
    }

    /// Cancels what was asked for ahead; nothing more is.
    func close() {
        state.withLock { state in
            state.closed = true
            state.cancelAll()
        }
    }
}
