import Foundation

extension Date {
    /// Seconds since 1970 in UTC, as both backends store instants they compare (expiries, horizons).
    var epochSeconds: Double { timeIntervalSince1970 }
}
