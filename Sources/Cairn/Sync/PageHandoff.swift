/// Pages read from an answer of several pages, handed from the task that reads them to the pull loop that applies
/// them: at most `capacity` wait, so a device that writes slower than its link holds a bounded number of pages in
/// memory while the rest waits in the connection.
actor PageHandoff {
    private let capacity: Int
    private var pages: [PulledPage] = []
    private var ended: (any Error)?? = nil
    private var closed = false
    private var taker: CheckedContinuation<Void, Never>?
    private var putter: CheckedContinuation<Void, Never>?

    init(capacity: Int) { self.capacity = max(capacity, 1) }

    /// Adds a page, waiting while `capacity` pages wait already; a closed handoff drops it.
    func put(_ page: PulledPage) async {
        while pages.count >= capacity, !closed { await withCheckedContinuation { putter = $0 } }
        guard !closed else { return }
        pages.append(page)
        wake(&taker)
    }

    /// No page comes after those put: the reader ended, with `error` when it failed.
    func finish(_ error: (any Error)?) {
        ended = .some(error)
        wake(&taker)
    }

    /// The next page; `nil` once the reader ended and every page was taken, or its error.
    func take() async throws -> PulledPage? {
        while pages.isEmpty {
            if let ended {
                if let error = ended { throw error }
                return nil
            }
            await withCheckedContinuation { taker = $0 }
        }
        wake(&putter)
        return pages.removeFirst()
    }

    /// The loop takes nothing more: a waiting reader goes on and drops what it reads.
    func close() {
        closed = true
        pages = []
        wake(&putter)
    }

    private func wake(_ waiter: inout CheckedContinuation<Void, Never>?) {
        waiter?.resume()
        waiter = nil
    }
}
