import Foundation
import GRDB
import Synchronization

/// Notices commits that other processes (or other clients of the same file in this process) make to a store file,
/// by reading SQLite's `data_version` on the store's writer connection: it changes only when another connection
/// commits, so the client's own writes never count and cannot feed back. On a change it tells GRDB's observations
/// (`notifyChanges(in: .fullDatabase)`), so ``CairnClient/observe(_:)`` and ``CairnClient/observeCount(_:)`` deliver
/// fresh values, then calls its listeners (the scheduler, which pushes what the other process queued).
///
/// It polls only while held (a running scheduler, an observation being read); otherwise nothing runs.
///
/// ```swift
/// let hold = watcher.hold()   // polls every `interval` from now on
/// defer { hold.release() }
/// ```
final class StoreChangeWatcher: Sendable {
    /// Keeps the watcher polling until released (at the latest when it is freed).
    final class Hold: Sendable {
        private let releaser: Mutex<(@Sendable () -> Void)?>

        init(_ release: @escaping @Sendable () -> Void) { releaser = Mutex(release) }

        /// Stops counting this hold; later calls do nothing.
        func release() { releaser.withLock { release in defer { release = nil }; return release }?() }

        deinit { release() }
    }

    private struct State {
        var holds = 0
        var poller: Task<Void, Never>?
        var lastVersion: Int?
        var listeners: [@Sendable () -> Void] = []
        var stopped = false
    }

    private let writer: any DatabaseWriter
    private let interval: Duration
    private let state = Mutex(State())

    /// A watcher of `writer`'s file. It learns the version now, so that a commit made before the first look (a
    /// poll starts an interval after its hold) still counts.
    init(writer: any DatabaseWriter, interval: Duration) {
        self.writer = writer
        self.interval = interval
        let version = try? writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") }
        state.withLock { $0.lastVersion = version }
    }

    /// Starts polling unless it already does; polling stops when every hold is released.
    func hold() -> Hold {
        state.withLock { state in
            state.holds += 1
            guard state.poller == nil, !state.stopped else { return }
            state.poller = Task { [weak self, interval] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    guard let self, !Task.isCancelled else { return }
                    await self.look()
                }
            }
        }
        return Hold { [weak self] in
            self?.state.withLock { state in
                state.holds -= 1
                if state.holds == 0 {
                    state.poller?.cancel()
                    state.poller = nil
                }
            }
        }
    }

    /// Calls `listener` after each commit by another connection that a look finds.
    func listen(_ listener: @escaping @Sendable () -> Void) {
        state.withLock { $0.listeners.append(listener) }
    }

    /// Looks once: when another connection committed since the last look, notifies the observations and the
    /// listeners.
    func look() async {
        let changed = (try? await writer.writeWithoutTransaction { [self] db -> Bool in
            let version = try Int.fetchOne(db, sql: "PRAGMA data_version")
            let changed = self.state.withLock { state in
                defer { state.lastVersion = version }
                return state.lastVersion != nil && state.lastVersion != version
            }
            // Observations fetch again when a transaction that notified changes commits.
            if changed { try db.inTransaction { try db.notifyChanges(in: .fullDatabase); return .commit } }
            return changed
        }) ?? false
        if changed { for listener in state.withLock({ $0.listeners }) { listener() } }
    }

    /// Stops polling for good (the store closes).
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.poller?.cancel()
            state.poller = nil
            state.listeners = []
        }
    }
}
