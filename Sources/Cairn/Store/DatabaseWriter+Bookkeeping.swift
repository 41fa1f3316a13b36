import CairnSQL
import GRDB

extension DatabaseWriter {
    /// Runs an immediate transaction that does not wait for the disk (`synchronous = NORMAL` for its commit): the
    /// store's sync bookkeeping, the sync lease and history. Other connections and processes see it at once and an app
    /// crash keeps it; only a power cut may undo the last of these, which the sync then does again. The app's own
    /// writes always wait for the disk (`synchronous = FULL`).
    func writeBookkeeping<T>(_ body: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction { db in try db.inUnforcedTransaction(body) }
    }
}
