import Foundation

/// How clients in several processes share one store file (an app and its extensions, or `cairn` commands): how
/// often a client looks for other processes' commits, and the sync lease that lets one process sync at a time.
/// See <doc:AppExtensions>.
///
/// ```swift
/// configuration.sharedStore = SharedStorePolicy(pollInterval: .milliseconds(500), leaseDuration: .seconds(60))
/// ```
public struct SharedStorePolicy: Sendable, Equatable {
    /// How often a client reads SQLite's `data_version` to notice commits by other processes, while a scheduler
    /// runs (``CairnClient/run()``) or a live query is observed. Default 250 ms; each look is a local read of some
    /// tens of microseconds (about 40 in a debug build), and none happens while nothing needs it.
    public var pollInterval: Duration
    /// How long the sync lease lasts unless renewed (the holder renews it at a third of this). A holder that is
    /// killed on this host is taken over at once; one that stops answering (suspended, on another host) after this
    /// long. Default 30 s.
    public var leaseDuration: Duration
    /// How long ``CairnClient/sync()``, ``CairnClient/push()`` and ``CairnClient/pull(_:)`` wait while another
    /// process runs a sync of its own, before failing with `sync_in_another_process`. They fail at once when the
    /// other process's scheduler holds the lease for good (it uploads this process's changes itself). Default 10 s.
    public var leaseWait: Duration

    /// A policy; every default is documented on its property.
    public init(pollInterval: Duration = .milliseconds(250), leaseDuration: Duration = .seconds(30), leaseWait: Duration = .seconds(10)) {
        self.pollInterval = pollInterval
        self.leaseDuration = leaseDuration
        self.leaseWait = leaseWait
    }
}
