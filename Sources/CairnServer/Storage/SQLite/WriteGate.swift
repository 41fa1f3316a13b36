import Synchronization

/// A first-in, first-out lock for async code: one holder at a time. ``SQLiteStorage`` takes it around every
/// write, so a project write transaction, which spans several database accesses, never has another write
/// between its accesses.
final class WriteGate: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Runs `body` while holding the gate.
    func withLock<T>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        let taken = state.withLock { state in
            if state.held { return false }
            state.held = true
            return true
        }
        if taken { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let free = state.withLock { state in
                if !state.held {
                    state.held = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if free { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.held = false
                return nil
            }
            // The gate passes straight to the next waiter: it stays held.
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
