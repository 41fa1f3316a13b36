import CairnProtocol
import Foundation
import PostgresNIO

extension PostgresStorage {
    /// Stores the client with `last_pulled_version` 0; its id is `c-` and a lowercase UUID.
    public func registerClient(project: String, user: String, device: String?, app: String?, now: Date) async throws -> String {
        let id = "c-" + UUID().uuidString.lowercased()
        try await client.query(
            """
            INSERT INTO clients (id, project, "user", device, app, created_at, last_seen)
            VALUES (\(id), \(project), \(user), \(device), \(app), \(now.epochSeconds), \(now.epochSeconds))
            """, logger: logger)
        return id
    }

    /// Raises the client's `last_pulled_version` (never lowers it, whatever instance notes it first) and sets its
    /// `last_seen`; a client of another project is ignored too.
    public func notePull(clientID: String, project: String, version: Int64, now: Date) async throws {
        try await client.query(
            """
            UPDATE clients SET last_pulled_version = GREATEST(last_pulled_version, \(version)), last_seen = \(now.epochSeconds)
            WHERE id = \(clientID) AND project = \(project)
            """, logger: logger)
    }
}
