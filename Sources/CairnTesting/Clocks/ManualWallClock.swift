import CairnProtocol
import Foundation
import Synchronization

/// A wall clock that stands still until told to move.
///
/// ```swift
/// let clock = ManualWallClock()
/// clock.advance(by: 3600)   // an hour later, at once
/// ```
public final class ManualWallClock: WallClock {
    private let current: Mutex<Date>

    /// A clock showing `start`.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }

    /// The time the clock shows.
    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}
