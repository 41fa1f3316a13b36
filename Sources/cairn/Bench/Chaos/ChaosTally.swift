import Synchronization

/// What a chaos run counts while its stores write and its processes die, shared by the writers and the server's
/// killer.
final class ChaosTally: Sendable {
    struct Counts: Sendable {
        /// Private records whose `cairn put` exited 0: the store acknowledged them, so the server must end up with each.
        var acknowledged: Set<String> = []
        /// Private records whose `cairn put` was killed: each may or may not be kept.
        var unsure: Set<String> = []
        /// Shared records' writes acknowledged.
        var sharedWrites = 0
        var clientKills = 0
        var serverKills = 0
        var syncs = 0
        var syncsSucceeded = 0
    }

    private let counts = Mutex(Counts())

    func update(_ body: (inout Counts) -> Void) { counts.withLock { body(&$0) } }

    var snapshot: Counts { counts.withLock { $0 } }
}
