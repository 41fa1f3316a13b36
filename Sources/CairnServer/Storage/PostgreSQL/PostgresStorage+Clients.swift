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

extension PostgresStorage {
    /// Reads the client by its primary key, with the head version it lags.
    public func client(id: String, project: String) async throws -> ClientSummary? {
        try await Self.clientSummaries(
            try await client.query("\(unescaped: Self.clientSummarySQL) WHERE c.project = \(project) AND c.id = \(id)", logger: logger)
        ).first
    }

    /// Deletes the client and its report in one transaction.
    public func removeClient(id: String, project: String) async throws -> Bool {
        try await Self.transaction(client, logger: logger) { connection in
            let rows = try await connection.query(
                "DELETE FROM clients WHERE id = \(id) AND project = \(project) RETURNING id", logger: logger)
            guard try await rows.decode(String.self).first(where: { _ in true }) != nil else { return false }
            try await connection.query("DELETE FROM client_diagnostics WHERE client_id = \(id)", logger: logger)
            return true
        }
    }

    /// Upserts the report when the client exists, in one statement.
    public func storeDiagnostics(clientID: String, project: String, report: String, now: Date) async throws -> Bool {
        let rows = try await client.query(
            """
            INSERT INTO client_diagnostics (client_id, project, uploaded_at, report)
            SELECT id, project, \(now.epochSeconds), \(report) FROM clients WHERE id = \(clientID) AND project = \(project)
            ON CONFLICT (client_id) DO UPDATE SET project = excluded.project, uploaded_at = excluded.uploaded_at, report = excluded.report
            RETURNING client_id
            """, logger: logger)
        return try await rows.decode(String.self).first(where: { _ in true }) != nil
    }

    /// Reads the report by its primary key.
    public func diagnostics(clientID: String, project: String) async throws -> StoredDiagnostics? {
        let rows = try await client.query(
            "SELECT report, uploaded_at FROM client_diagnostics WHERE client_id = \(clientID) AND project = \(project)", logger: logger)
        for try await (report, uploaded) in rows.decode((String, Double).self) {
            return StoredDiagnostics(report: report, uploadedAt: Date(timeIntervalSince1970: uploaded))
        }
        return nil
    }

    public func rememberedOperation(project: String, opId: String) async throws -> OperationHistoryEntry? {
        guard !Self.holdsNUL(opId) else { return nil }
        let rows = try await client.query(
            "SELECT tag, created_at, result FROM operations WHERE project = \(project) AND op_id = \(opId)", logger: logger)
        for try await (tag, created, result) in rows.decode((String?, Double, String).self) {
            return OperationHistoryEntry(
                opId: opId, tag: tag, createdAt: Date(timeIntervalSince1970: created), result: try JSONValue(parsing: Data(result.utf8)))
        }
        return nil
    }
}
