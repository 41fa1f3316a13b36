import Foundation

/// How far the running upload or download is, and an estimate of the time it still needs from the rate measured so
/// far (SAP's time estimates): ``SyncStatus/upload`` and ``SyncStatus/download``.
///
/// ```swift
/// for await status in await client.statusUpdates() {
///     if let download = status.download, let left = download.timeLeft { label = "\(download.done) of \(download.total ?? 0), \(left) left" }
/// }
/// ```
public struct TransferEstimate: Sendable, Hashable {
    /// Operations uploaded or records applied so far in this run.
    public var done: Int
    /// How many there are in all, when known: the upload queue when the push started; for a download, the records of
    /// the snapshot being pulled (the server says so on its first page). Unknown for incremental pulls.
    public var total: Int?
    /// The measured rate, per second, once something was done.
    public var perSecond: Double?

    /// What remains, when the total is known.
    public var remaining: Int? { total.map { max(0, $0 - done) } }

    /// The time left at the measured rate, when the total and a rate are known.
    public var timeLeft: Duration? {
        guard let remaining, let perSecond, perSecond > 0 else { return nil }
        return .milliseconds(Int64((Double(remaining) / perSecond * 1000).rounded()))
    }

    /// The progress from 0 to 1, when the total is known.
    public var fraction: Double? {
        guard let total else { return nil }
        return total > 0 ? min(1, Double(done) / Double(total)) : 1
    }

    /// An estimate: `done` of `total` after `elapsed`.
    public init(done: Int, total: Int?, elapsed: Duration) {
        self.done = done
        self.total = total
        let seconds = elapsed.timeInterval
        perSecond = done > 0 && seconds > 0 ? Double(done) / seconds : nil
    }
}
