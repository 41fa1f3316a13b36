import Foundation

/// Where Cairn reads the time of day: token expiry, history timestamps, throttling windows and purge horizons all
/// ask it, so tests move time forward instead of sleeping. Waiting is done on a Swift `Clock` beside it.
///
/// ```swift
/// struct FrozenClock: WallClock { func now() -> Date { Date(timeIntervalSince1970: 0) } }
/// ```
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's clock.
public struct SystemWallClock: WallClock {
    /// The system clock.
    public init() {}
    /// `Date()`.
    public func now() -> Date { Date() }
}
