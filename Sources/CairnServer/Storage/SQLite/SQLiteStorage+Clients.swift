import CairnProtocol
import Foundation
import GRDB

extension SQLiteStorage {
    /// Stores the client with `last_pulled_version` 0; its id is `c-` and a lowercase UUID.
    public func registerClient(project: String, user: String, device: String?, app: String?, now: Date) async throws -> String {
        let id = "c-" + UUID().uuidString.lowercased()
        try await write { db in
            try db.execute(
                sql: "INSERT INTO clients (id, project, user, device, app, created_at, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [id, project, user, device, app, now.epochSeconds, now.epochSeconds])
        }
        return id
    }

    /// Raises the client's `last_pulled_version` (never lowers it) and sets its `last_seen`; a client of another
    /// project is ignored too.
    public func notePull(clientID: String, project: String, version: Int64, now: Date) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE clients SET last_pulled_version = max(last_pulled_version, ?), last_seen = ?
                    WHERE id = ? AND project = ?
                    """,
                arguments: [version, now.epochSeconds, clientID, project])
        }
    }
}
