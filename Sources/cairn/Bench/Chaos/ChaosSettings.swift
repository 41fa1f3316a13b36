/// How hard a chaos run shakes Cairn, and which server backend it shakes.
struct ChaosSettings: Sendable {
    enum Backend: String, Sendable, CaseIterable {
        case sqlite, postgres
    }

    /// Connections the fault proxy must have broken before the run ends.
    var faults: Int
    /// Processes (clients and the server) that must have been killed with SIGKILL before the run ends.
    var kills: Int
    var backend: Backend
    /// The PostgreSQL database, with `backend == .postgres`.
    var postgresURL: String?
    /// Stores writing at once, each a user of its own.
    var stores: Int
    var seed: UInt64
    /// The share of connections the proxy breaks.
    var faultRate: Double
    /// The chance that a `cairn sync` is killed part-way, and that a `cairn put` is.
    var syncKillChance = 0.25
    var putKillChance = 0.05
    /// Records every store writes.
    var sharedRecords = 4

    /// The server's share of the kills: one in ten, at least one.
    var serverKills: Int { max(1, kills / 10) }
    var clientKills: Int { max(0, kills - serverKills) }
}
