import CairnProtocol
import Foundation
import Logging
import PostgresNIO

/// Live notices between instances through PostgreSQL's `NOTIFY` and `LISTEN` on the channel `cairn_notices`.
///
/// Each payload is a small JSON object: the sending instance's random id, the project and the changed collections
/// with their versions. An instance skips its own notices (it delivered them already) and listens on one pooled
/// connection of its own.
final class PostgresNoticeChannel: NoticeChannel {
    static let channel = "cairn_notices"
    let client: PostgresPool
    let logger: Logger
    /// Tells this instance's notices from the others'.
    let instance = UUID().uuidString.lowercased()

    init(client: PostgresPool, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// `pg_notify` in a statement of its own: delivered to the listeners at once (it commits at once).
    func broadcast(project: String, changes: [String: Int64]) async throws {
        let payload = JSONValue.object([
            "from": .string(instance), "project": .string(project), "changes": .object(changes.mapValues { .integer($0) }),
        ]).jsonText()
        try await client.query("SELECT pg_notify(\(Self.channel), \(payload))", logger: logger)
    }

    /// Listens on a leased connection until cancelled or the connection fails.
    func receive(_ deliver: @escaping @Sendable (String, [String: Int64]) async -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: Self.channel) { notifications in
                for try await notification in notifications {
                    guard let notice = try? JSONValue(parsing: Array(notification.payload.utf8)).objectValue,
                        notice["from"]?.stringValue != instance, let project = notice["project"]?.stringValue,
                        let changes = notice["changes"]?.objectValue?.compactMapValues(\.integerValue)
                    else { continue }
                    await deliver(project, changes)
                }
            }
        }
    }
}
