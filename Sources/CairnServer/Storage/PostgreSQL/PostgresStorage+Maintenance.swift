import CairnProtocol
import Foundation
import Logging
import PostgresNIO

extension PostgresStorage {
    /// Purges in one transaction, comparing tombstones' `changed_at`, operations' `created_at` and tokens'
    /// `expires_at` (epoch seconds) with the three dates; a collection's `purged_through` only ever rises. A tombstone
    /// that a client seen since `tombstonesBefore` has not pulled yet stays. Every instance may run it: a second
    /// purge at once finds less or nothing to delete.
    public func purge(tombstonesBefore: Date, operationsBefore: Date, now: Date) async throws -> PurgeReport {
        // $1 the horizon, $2 when holders were seen since (PurgeRules).
        var binds = PostgresBindings()
        binds.append(tombstonesBefore.epochSeconds)
        binds.append(Self.holdersSeenSince(tombstonesBefore: tombstonesBefore, now: now).epochSeconds)
        let holds = "WITH holds AS (\(PurgeRules.holds(seenSince: "$2")))"
        return try await Self.transaction(client, logger: logger) { connection in
            // The purged tombstones raise, per collection, the highest version purged: cursors below it expire.
            let tombstones = try await Self.count(
                connection,
                PostgresQuery(unsafeSQL: """
                \(holds),
                purged AS (
                    DELETE FROM records WHERE \(PurgeRules.tombstones(before: "$1", holds: "holds", isDeleted: "deleted"))
                    RETURNING project, collection, version),
                marks AS (
                    INSERT INTO collection_state (project, collection, purged_through)
                    SELECT project, collection, max(version) FROM purged GROUP BY project, collection
                    ON CONFLICT (project, collection)
                    DO UPDATE SET purged_through = GREATEST(collection_state.purged_through, excluded.purged_through))
                SELECT 1 FROM purged
                """, binds: binds), logger: logger)
            // The replaced states go by the same rule, measured from when they were replaced; a cursor under data rules
            // from before the change that replaced one expires with it (`history_through`).
            try await connection.query(
                PostgresQuery(unsafeSQL: """
                \(holds),
                purged AS (
                    DELETE FROM record_history WHERE \(PurgeRules.replacedStates(before: "$1", holds: "holds"))
                    RETURNING project, collection, superseded_version)
                INSERT INTO collection_state (project, collection, history_through)
                SELECT project, collection, max(superseded_version) FROM purged GROUP BY project, collection
                ON CONFLICT (project, collection)
                DO UPDATE SET history_through = GREATEST(collection_state.history_through, excluded.history_through)
                """, binds: binds), logger: logger)
            // Actions' stored answers are remembered as long as operations' results, for the same replays.
            let operations = try await Self.count(
                connection, "DELETE FROM operations WHERE created_at < \(operationsBefore.epochSeconds) RETURNING 1", logger: logger)
                + Self.count(connection, "DELETE FROM action_calls WHERE completed_at < \(operationsBefore.epochSeconds) RETURNING 1", logger: logger)
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
