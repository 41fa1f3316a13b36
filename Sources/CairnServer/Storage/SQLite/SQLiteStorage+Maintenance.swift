import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    /// Purges in one write transaction, comparing tombstones' `changed_at`, operations' `created_at` and tokens'
    /// `expires_at` (epoch seconds) with the three dates; a collection's `purged_through` only ever rises.
    public func purge(tombstonesBefore: Date, operationsBefore: Date, now: Date) async throws -> PurgeReport {
        try await write { db in
            // Remember, per collection, the highest tombstone version purged: cursors below it expire.
            try db.execute(
                sql: """
                    INSERT INTO collection_state (project, collection, purged_through)
                    SELECT project, collection, max(version) FROM records
                    WHERE deleted = 1 AND changed_at < ? GROUP BY project, collection
                    ON CONFLICT (project, collection) DO UPDATE SET purged_through = max(purged_through, excluded.purged_through)
                    """,
                arguments: [tombstonesBefore.epochSeconds])
            try db.execute(sql: "DELETE FROM records WHERE deleted = 1 AND changed_at < ?", arguments: [tombstonesBefore.epochSeconds])
            let tombstones = db.changesCount
            try db.execute(sql: "DELETE FROM operations WHERE created_at < ?", arguments: [operationsBefore.epochSeconds])
            let operations = db.changesCount
            try db.execute(sql: "DELETE FROM tokens WHERE expires_at < ?", arguments: [now.epochSeconds])
            let tokens = db.changesCount
            return PurgeReport(tombstones: tombstones, operations: operations, tokens: tokens)
        }
    }
}
