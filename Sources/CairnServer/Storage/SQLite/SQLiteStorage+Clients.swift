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
        // A pull's answer waits for this note: it does not wait for the disk too.
        try await writeUnforced { db in
            try db.execute(
                sql: """
                    UPDATE clients SET last_pulled_version = max(last_pulled_version, ?), last_seen = ?
                    WHERE id = ? AND project = ?
                    """,
                arguments: [version, now.epochSeconds, clientID, project])
        }
    }
}

extension SQLiteStorage {
    /// Reads the client by its primary key, with the head version it lags.
    public func client(id: String, project: String) async throws -> ClientSummary? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: Self.clientSummarySQL + " WHERE c.project = ? AND c.id = ?", arguments: [project, id]).map(Self.clientSummary)
        }
    }

    /// Deletes the client and its report in one transaction.
    public func removeClient(id: String, project: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM clients WHERE id = ? AND project = ?", arguments: [id, project])
            guard db.changesCount == 1 else { return false }
            try db.execute(sql: "DELETE FROM client_diagnostics WHERE client_id = ?", arguments: [id])
            return true
        }
    }

    /// Upserts the report when the client exists, in one transaction.
    public func storeDiagnostics(clientID: String, project: String, report: String, now: Date) async throws -> Bool {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM clients WHERE id = ? AND project = ?", arguments: [clientID, project]) != nil
            else { return false }
            try db.execute(
                sql: """
                    INSERT INTO client_diagnostics (client_id, project, uploaded_at, report) VALUES (?, ?, ?, ?)
                    ON CONFLICT (client_id) DO UPDATE SET project = excluded.project, uploaded_at = excluded.uploaded_at, report = excluded.report
                    """,
                arguments: [clientID, project, now.epochSeconds, report])
            return true
        }
    }

    /// Reads the report by its primary key.
    public func diagnostics(clientID: String, project: String) async throws -> StoredDiagnostics? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT report, uploaded_at FROM client_diagnostics WHERE client_id = ? AND project = ?", arguments: [clientID, project]
            ).map { StoredDiagnostics(report: $0["report"], uploadedAt: Date(timeIntervalSince1970: $0["uploaded_at"])) }
        }
    }

    public func rememberedOperation(project: String, opId: String) async throws -> OperationHistoryEntry? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT tag, created_at, result FROM operations WHERE project = ? AND op_id = ?", arguments: [project, opId]
            ).map { row in
                OperationHistoryEntry(
                    opId: opId, tag: row["tag"], createdAt: Date(timeIntervalSince1970: row["created_at"]),
                    result: try JSONValue(parsing: Data((row["result"] as String).utf8)))
            }
        }
    }
}
