import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    /// Purges in one write transaction, comparing tombstones' `changed_at`, operations' `created_at` and tokens'
    /// `expires_at` (epoch seconds) with the three dates; a collection's `purged_through` only ever rises. A tombstone
    /// that a client seen within twice the retention has not pulled yet stays (``ServerStorage/purge(tombstonesBefore:operationsBefore:now:)``).
    public func purge(tombstonesBefore: Date, operationsBefore: Date, now: Date) async throws -> PurgeReport {
        try await write { db in
            // Per project, the lowest version a client seen within twice the retention pulled to; tombstones above it stay.
            try db.execute(sql: "DROP TABLE IF EXISTS temp.purge_holds")
            try db.execute(
                sql: "CREATE TEMP TABLE purge_holds AS \(PurgeRules.holds(seenSince: "?"))",
                arguments: [Self.holdersSeenSince(tombstonesBefore: tombstonesBefore, now: now).epochSeconds])
            // `deleted = 1`, as the partial index of tombstones says it.
            let purgeable = PurgeRules.tombstones(before: "?", holds: "purge_holds", isDeleted: "deleted = 1")
            // Remember, per collection, the highest version purged: cursors below it expire.
            func raise(_ mark: String, to version: String, from table: String, where condition: String) throws {
                try db.execute(
                    sql: """
                        INSERT INTO collection_state (project, collection, \(mark))
                        SELECT project, collection, max(\(version)) FROM \(table)
                        WHERE \(condition) GROUP BY project, collection
                        ON CONFLICT (project, collection) DO UPDATE SET \(mark) = max(\(mark), excluded.\(mark))
                        """,
                    arguments: [tombstonesBefore.epochSeconds])
            }
            try raise("purged_through", to: "version", from: "records", where: purgeable)
            try db.execute(sql: "DELETE FROM records WHERE \(purgeable)", arguments: [tombstonesBefore.epochSeconds])
            let tombstones = db.changesCount
            // The replaced states go by the same rule, measured from when they were replaced; a cursor under data
            // rules from before the change that replaced one expires with it (`history_through`).
            let replaced = PurgeRules.replacedStates(before: "?", holds: "purge_holds")
            try raise("history_through", to: "superseded_version", from: "record_history", where: replaced)
            try db.execute(sql: "DELETE FROM record_history WHERE \(replaced)", arguments: [tombstonesBefore.epochSeconds])
            try db.execute(sql: "DROP TABLE temp.purge_holds")
            // Rows are added as operations come, so rowid order is age order: the purge deletes up to the first row
            // still to keep, reading only the rows it deletes (no index on the age, which every push would pay for).
            // A row out of that order (a clock set back, a copied store) is kept longer, never purged early.
            try db.execute(
                sql: """
                    DELETE FROM operations WHERE rowid < coalesce(
                        (SELECT rowid FROM operations WHERE created_at >= ? ORDER BY rowid LIMIT 1),
                        (SELECT max(rowid) + 1 FROM operations))
                    """,
                arguments: [operationsBefore.epochSeconds])
            var operations = db.changesCount
            // Actions' stored answers are remembered as long as operations' results, for the same replays.
            try db.execute(sql: "DELETE FROM action_calls WHERE completed_at < ?", arguments: [operationsBefore.epochSeconds])
            operations += db.changesCount
            try db.execute(sql: "DELETE FROM tokens WHERE expires_at < ?", arguments: [now.epochSeconds])
            let tokens = db.changesCount
            return PurgeReport(tombstones: tombstones, operations: operations, tokens: tokens)
        }
    }
}
