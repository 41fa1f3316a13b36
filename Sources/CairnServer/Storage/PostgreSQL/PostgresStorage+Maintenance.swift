import CairnProtocol
import Foundation
import Logging
import PostgresNIO

extension PostgresStorage {
    /// Purges in one transaction, comparing tombstones' `changed_at`, operations' `created_at` and tokens'
    /// `expires_at` (epoch seconds) with the three dates; a collection's `purged_through` only ever rises. Every
    /// instance may run it: a second purge at once finds less or nothing to delete.
    public func purge(tombstonesBefore: Date, operationsBefore: Date, now: Date) async throws -> PurgeReport {
        try await Self.transaction(client, logger: logger) { connection in
            // Remember, per collection, the highest tombstone version purged: cursors below it expire.
            try await connection.query(
                """
                INSERT INTO collection_state (project, collection, purged_through)
                SELECT project, collection, max(version) FROM records
                WHERE deleted AND changed_at < \(tombstonesBefore.epochSeconds) GROUP BY project, collection
                ON CONFLICT (project, collection)
                DO UPDATE SET purged_through = GREATEST(collection_state.purged_through, excluded.purged_through)
                """, logger: logger)
            let tombstones = try await Self.count(
                connection, "DELETE FROM records WHERE deleted AND changed_at < \(tombstonesBefore.epochSeconds) RETURNING 1", logger: logger)
            let operations = try await Self.count(
                connection, "DELETE FROM operations WHERE created_at < \(operationsBefore.epochSeconds) RETURNING 1", logger: logger)
            let tokens = try await Self.count(connection, "DELETE FROM tokens WHERE expires_at < \(now.epochSeconds) RETURNING 1", logger: logger)
            // Failed sign-ins older than a day count for no window.
            try await connection.query("DELETE FROM login_failures WHERE at < \(now.epochSeconds - 86_400)", logger: logger)
            return PurgeReport(tombstones: tombstones, operations: operations, tokens: tokens)
        }
    }

    /// How many rows `query` returns, on `connection`.
    static func count(_ connection: PostgresConnection, _ query: PostgresQuery, logger: Logger) async throws -> Int {
        var count = 0
        for try await _ in try await connection.query(query, logger: logger) { count += 1 }
        return count
    }
}
