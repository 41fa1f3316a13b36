import Synchronization

/// The pages of one pull asked for ahead of the one being applied: at most one, asked for as soon as the page before it
/// named its cursor, which the server puts in its answer's head (`Cairn-Cursor`) so that the next request leaves
/// while this page's body still travels. On a slow link the round trips then overlap the transfer instead of adding
/// up page after page; memory stays at two pages (the one applied, the one ahead).
final class PagePipeline: Sendable {
    /// Starts downloading and reading a page; its answer's head may name the next one (``prefetch(_:)``).
    typealias Fetch = @Sendable (PageRequest, PagePipeline) -> Task<PulledPage, any Error>

    private struct State {
        /// The page asked for ahead, not yet taken by the pull loop.
        var ahead: (request: PageRequest, page: Task<PulledPage, any Error>)?
        /// The page after it, asked for once the loop takes the one ahead.
        var waiting: PageRequest?
        var closed = false
    }

    private let fetch: Fetch
    private let state = Mutex(State())

    init(fetch: @escaping Fetch) {
        self.fetch = fetch
    }

    /// The page for `request`: the one asked for ahead when it is that one (the page after it is then asked for, if
    /// known), else a new download, dropping anything asked for ahead (the cursors moved another way: a resync).
    func take(_ request: PageRequest) -> Task<PulledPage, any Error> {
        state.withLock { state in
            if let ahead = state.ahead, ahead.request == request {
                state.ahead = state.waiting.map { ($0, fetch($0, self)) }
                state.waiting = nil
                return ahead.page
            }
            state.ahead?.page.cancel()
            state.ahead = nil
            state.waiting = nil
            return fetch(request, self)
        }
    }

    /// Asks for `request` ahead: now when no page is ahead, else once the page ahead is taken. Asking again for a
    /// page already asked for does nothing.
    func prefetch(_ request: PageRequest) {
        state.withLock { state in
            guard !state.closed, state.ahead?.request != request, state.waiting != request else { return }
            if state.ahead == nil {
                state.ahead = (request, fetch(request, self))
            } else {
                state.waiting = request
            }
        }
    }

    /// Cancels what was asked for ahead; nothing more is.
    func close() {
        state.withLock { state in
            state.closed = true
            state.ahead?.page.cancel()
            state.ahead = nil
            state.waiting = nil
        }
    }
}
