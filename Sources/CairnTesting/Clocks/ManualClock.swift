import Foundation
import Synchronization

/// A Swift `Clock` that only moves when a test says so: sleeps end when ``advance(by:)`` passes their deadline,
/// so timers, backoff and heartbeats are tested step by step without waiting.
///
/// ```swift
/// let clock = ManualClock()
/// let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
/// await clock.waitForSleepers(1)
/// clock.advance(by: .seconds(60))   // the sleeper wakes now
/// ```
public final class ManualClock: Clock, Sendable {
    /// A point on a ``ManualClock``: the time since the clock was made.
    public struct Instant: InstantProtocol, Sendable {
        /// Time since the clock's start.
        public var offset: Duration
        /// An instant `offset` after the start.
        public init(offset: Duration) { self.offset = offset }
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Earlier instants come first.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        var totalSleeps = 0
        var cancelled: Set<UInt64> = []
    }

    private let state = Mutex(State())

    /// A clock at its start.
    public init() {}

    /// The clock's present instant.
    public var now: Instant { state.withLock { $0.now } }

    /// The clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// How many sleeps are waiting now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The deadlines of the sleeps waiting now, earliest first: a test sees that a timer was armed for a given instant.
    public var deadlines: [Instant] { state.withLock { $0.sleepers.map(\.deadline).sorted() } }

    /// How many sleeps have begun since the clock was made.
    public var totalSleeps: Int { state.withLock { $0.totalSleeps } }

    /// Waits (without advancing the clock) until at least `count` sleeps are waiting, however long that takes on a
    /// busy machine; returns early only when the waiting task is cancelled (a test's `.timeLimit`).
    public func waitForSleepers(_ count: Int = 1) async {
        while sleeperCount < count, !Task.isCancelled {
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Sleeps until `deadline` on this clock, or throws `CancellationError` when the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.totalSleeps += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and wakes every sleep whose deadline has come.
    public func advance(by duration: Duration) {
        let woken = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in woken.sorted(by: { $0.deadline < $1.deadline }) { sleeper.continuation.resume() }
    }
}
