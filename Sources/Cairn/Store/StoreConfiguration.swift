import CairnProtocol

/// What a ``LocalStore`` needs besides its database.
///
/// ```swift
/// let store = try LocalStore(writer: DatabaseQueue(), configuration: StoreConfiguration(wallClock: ManualWallClock()))
/// ```
struct StoreConfiguration: Sendable {
    /// Where the store reads the time of day: when a change was made, failed or resolved, and sync history.
    var wallClock: any WallClock = SystemWallClock()
    /// How many sync runs the history keeps.
    var historyLimit: Int = 1000
    /// The key of an encrypted store file; nil for a plaintext store.
    var key: StoreKey?
    /// Which local changes fold into a record's queued change.
    var combining = QueueCombining.all
}
