import Foundation
import Synchronization

/// Where the server reads the time: token expiry, throttling windows and purge horizons all ask it,
/// so tests can move time forward instead of sleeping.
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's clock.
public struct SystemWallClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that stands still until told to move; for tests.
///
/// ```swift
/// let clock = ManualWallClock()
/// clock.advance(by: 3600)
/// ```
public final class ManualWallClock: WallClock {
    private let current: Mutex<Date>

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }

    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}
