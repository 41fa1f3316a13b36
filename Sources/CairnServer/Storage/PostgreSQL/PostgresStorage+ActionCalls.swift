import Foundation
import PostgresNIO

extension PostgresStorage {
    /// Reads the call by its primary key.
    public func actionCall(project: String, idempotencyKey: String) async throws -> StoredActionCall? {
        let rows = try await client.query(
            """
            SELECT action, caller, status, answer, completed_at FROM action_calls
            WHERE project = \(project) AND idempotency_key = \(idempotencyKey)
            """, logger: logger)
        for try await (action, caller, status, answer, completed) in rows.decode((String, String, Int64, String, Double).self) {
            return StoredActionCall(
                project: project, idempotencyKey: idempotencyKey, action: action, caller: caller, status: Int(status), answer: answer,
                completedAt: Date(timeIntervalSince1970: completed))
        }
        return nil
    }

    /// Inserts the call unless its key is there (whatever instance stored it first), then reads what is stored.
    public func recordActionCall(_ call: StoredActionCall) async throws -> StoredActionCall {
        try await client.query(
            """
            INSERT INTO action_calls (project, idempotency_key, action, caller, status, answer, completed_at)
            VALUES (\(call.project), \(call.idempotencyKey), \(call.action), \(call.caller), \(Int64(call.status)), \(call.answer),
                    \(call.completedAt.epochSeconds))
            ON CONFLICT (project, idempotency_key) DO NOTHING
            """, logger: logger)
        return try await actionCall(project: call.project, idempotencyKey: call.idempotencyKey) ?? call
    }
}
