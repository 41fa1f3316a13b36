import CairnProtocol
import Foundation
import Synchronization

/// What a bounded background sync step achieved.
public enum BackgroundSyncOutcome: String, Sendable, Hashable {
    /// Everything was pushed and pulled.
    case completed
    /// The time ran out, or the step was cancelled (the system's expiration handler): what was done is kept, page by
    /// page, and the next sync goes on from there.
    case expired
    /// The sync failed (the server unreachable, say); the changes stay queued.
    case failed
}

extension CairnClient {
    /// Runs one sync (push, then pull) bounded by `timeLimit`, for the few seconds an operating system gives an app
    /// in the background. Every uploaded batch and every pulled page is committed as it completes, so stopping at
    /// any moment loses nothing; cancelling the calling task (an expiration handler) ends it as promptly as the
    /// time limit does. No SQLite transaction stays open once it returns.
    ///
    /// ```swift
    /// let outcome = await client.backgroundSync(timeLimit: .seconds(25))   // .completed, .expired or .failed
    /// ```
    ///
    /// On Apple platforms, ``CairnClient/handle(backgroundTask:timeLimit:)`` wires it to a `BGAppRefreshTask` or
    /// `BGProcessingTask`.
    public func backgroundSync(timeLimit: Duration) async -> BackgroundSyncOutcome {
        let expired = Mutex(false)
        let work = Task { try await self.sync() }
        let clock = configuration.clock
        let timer = Task {
            try await clock.sleep(for: timeLimit)
            expired.withLock { $0 = true }
            work.cancel()
        }
        defer { timer.cancel() }
        let result = await withTaskCancellationHandler {
            await work.result
        } onCancel: {
            expired.withLock { $0 = true }
            work.cancel()
        }
        switch result {
        case .success: return .completed
        case .failure: return expired.withLock { $0 } ? .expired : .failed
        }
    }
}

#if canImport(BackgroundTasks) && os(iOS)
import BackgroundTasks

extension CairnClient {
    /// Runs ``backgroundSync(timeLimit:)`` for a `BGAppRefreshTask` or `BGProcessingTask`: the task's expiration
    /// handler stops it, and the task is marked completed (successfully when everything synced).
    ///
    /// ```swift
    /// BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.sync", using: nil) { task in
    ///     client.handle(backgroundTask: task)
    /// }
    /// ```
    public func handle(backgroundTask task: BGTask, timeLimit: Duration = .seconds(25)) {
        nonisolated(unsafe) let task = task
        let step = Task { await self.backgroundSync(timeLimit: timeLimit) }
        task.expirationHandler = { step.cancel() }
        Task {
            let outcome = await step.value
            task.setTaskCompleted(success: outcome == .completed)
        }
    }
}
#endif
