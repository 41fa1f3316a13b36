import CairnProtocol
import Foundation
import Synchronization

/// A wall clock that runs, but shows another clock's time plus an offset that a test can change: a device whose
/// clock is hours ahead, days behind, or set back while the app runs.
///
/// ```swift
/// let device = SkewedWallClock(following: serverClock, offset: 5 * 3600)   // five hours ahead
/// device.offset = -3 * 86_400                                            // now three days behind
/// ```
public final class SkewedWallClock: WallClock {
    private let base: any WallClock
    private let skew: Mutex<TimeInterval>

    /// A clock showing `base`'s time plus `offset` seconds.
    public init(following base: any WallClock = SystemWallClock(), offset: TimeInterval) {
        self.base = base
        skew = Mutex(offset)
    }

    /// Seconds added to the base clock's time (negative: behind).
    public var offset: TimeInterval {
        get { skew.withLock { $0 } }
        set { skew.withLock { $0 = newValue } }
    }

    /// The base clock's time plus the offset.
    public func now() -> Date { base.now() + offset }
}
