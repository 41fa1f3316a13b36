#if canImport(Network)
import Foundation
import Network

extension CairnClient {
    /// Follows the device's network path (Apple platforms): when a usable path appears, a failed sync is retried at
    /// once and the live connection reopens; whether it is expensive or constrained is passed on to
    /// ``networkDidChange(metered:)``. Keep the returned monitor; `cancel()` it to stop.
    ///
    /// ```swift
    /// let monitor = client.followNetworkPath()
    /// let syncing = Task { await client.run() }
    /// ```
    public func followNetworkPath() -> NWPathMonitor {
        let monitor = NWPathMonitor()
        monitor.pathUpdateHandler = { [weak self] path in
            guard path.status == .satisfied else { return }
            self?.networkDidChange(metered: path.isExpensive || path.isConstrained)
        }
        monitor.start(queue: DispatchQueue(label: "cairn.network-path"))
        return monitor
    }
}
#endif
