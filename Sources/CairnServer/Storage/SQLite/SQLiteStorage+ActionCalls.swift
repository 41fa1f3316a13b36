import Foundation
import GRDB

extension SQLiteStorage {
    /// Reads the call by its primary key.
    public func actionCall(project: String, idempotencyKey: String) async throws -> StoredActionCall? {
        try await pool.read { db in try Self.actionCall(db, project: project, idempotencyKey: idempotencyKey) }
    }

    /// Inserts the call unless its key is there, then reads what is stored, in one transaction.
    public func recordActionCall(_ call: StoredActionCall) async throws -> StoredActionCall {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO action_calls (project, idempotency_key, action, caller, status, answer, completed_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project, idempotency_key) DO NOTHING
                    """,
                arguments: [call.project, call.idempotencyKey, call.action, call.caller, call.status, call.answer, call.completedAt.epochSeconds])
            return try Self.actionCall(db, project: call.project, idempotencyKey: call.idempotencyKey) ?? call
        }
    }

    private static func actionCall(_ db: Database, project: String, idempotencyKey: String) throws -> StoredActionCall? {
        try Row.fetchOne(
            db, sql: "SELECT action, caller, status, answer, completed_at FROM action_calls WHERE project = ? AND idempotency_key = ?",
            arguments: [project, idempotencyKey]
        ).map { row in
            StoredActionCall(
                project: project, idempotencyKey: idempotencyKey, action: row["action"], caller: row["caller"], status: row["status"],
                answer: row["answer"], completedAt: Date(timeIntervalSince1970: row["completed_at"]))
        }
    }
}
