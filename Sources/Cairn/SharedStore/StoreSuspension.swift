import Foundation
import GRDB
import Synchronization

extension CairnClient {
    /// Post this when the app is about to be suspended (from `applicationDidEnterBackground`, a scene phase change
    /// to `.background`, or a background task's expiration handler): every open file store gives its sync lease
    /// back, then releases SQLite's locks and takes none until ``resumeNotification``, so that the system never
    /// kills the app for a lock held in the background (`0xdead10cc`). See <doc:AppExtensions>.
    ///
    /// ```swift
    /// NotificationCenter.default.post(name: CairnClient.suspendNotification, object: nil)
    /// ```
    ///
    /// It also suspends the app's own GRDB databases opened with `observesSuspensionNotifications`.
    public static let suspendNotification = Notification.Name("Cairn.Suspend")

    /// Post this when the app is back in the foreground (or a background task starts): stores take locks again,
    /// and a running scheduler takes the sync lease back.
    ///
    /// ```swift
    /// NotificationCenter.default.post(name: CairnClient.resumeNotification, object: nil)
    /// ```
    public static let resumeNotification = Notification.Name("Cairn.Resume")
}

/// Carries out ``CairnClient/suspendNotification`` and ``CairnClient/resumeNotification`` for every open file
/// store, in order: the sync leases go back first (a write), then GRDB's suspension releases SQLite's locks (file
/// stores are opened with `observesSuspensionNotifications`). On resume, the other way round.
enum StoreSuspension {
    private struct Entry: Sendable {
        weak var lease: SyncLease?
    }

    private static let leases = Mutex<[Entry]>([])

    /// Listens for the notifications once, at the first file store opened.
    private static let listening: Bool = {
        let center = NotificationCenter.default
        _ = center.addObserver(forName: CairnClient.suspendNotification, object: nil, queue: nil) { _ in suspend() }
        _ = center.addObserver(forName: CairnClient.resumeNotification, object: nil, queue: nil) { _ in resume() }
        return true
    }()

    /// Includes an open store's lease in suspensions.
    static func register(_ lease: SyncLease) {
        _ = listening
        leases.withLock { entries in
            entries.removeAll { $0.lease == nil }
            entries.append(Entry(lease: lease))
        }
    }

    private static var open: [SyncLease] { leases.withLock { $0.compactMap(\.lease) } }

    private static func suspend() {
        for lease in open { lease.suspend() }
        NotificationCenter.default.post(name: Database.suspendNotification, object: nil)
    }

    private static func resume() {
        NotificationCenter.default.post(name: Database.resumeNotification, object: nil)
        for lease in open { lease.resume() }
    }
}
