import Foundation

/// What a client on a store file needs to share it with other processes: the watcher that notices their commits,
/// and the sync lease that lets one process sync at a time. A store in memory has neither.
///
/// ```swift
/// let shared = SharedStore(store: store, configuration: configuration)   // nil in memory
/// ```
struct SharedStore: Sendable {
    /// Notices other processes' commits (SQLite's `data_version`).
    let watcher: StoreChangeWatcher
    /// Which process syncs.
    let lease: SyncLease

    init?(store: LocalStore, configuration: CairnConfiguration) {
        guard case .file = configuration.store, store.lease != nil else { return nil }
        watcher = StoreChangeWatcher(writer: store.writer, interval: configuration.sharedStore.pollInterval)
        lease = SyncLease(
            writer: store.writer, table: store.syncLease, policy: configuration.sharedStore, wallClock: configuration.wallClock,
            clock: configuration.clock)
        StoreSuspension.register(lease)
    }

    /// Stops watching and gives the lease back (the client closes).
    func close() async {
        watcher.stop()
        await lease.close()
    }
}
